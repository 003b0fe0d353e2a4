import type { DecoySettings } from '../decoys';
import type { HitSource } from '../threats.repository';
import { apiKey } from './api-key';
import { awsAccessKey } from './aws-access-key';
import { clonedWebsite } from './cloned-website';
import { databaseUrl } from './database-url';
import { dns } from './dns';
import { email } from './email';
import { excelDocument } from './excel-document';
import { fastRedirect } from './fast-redirect';
import { platformOf, type KindModule, type Planted, type PlantOptions } from './kind';
import { kubeconfig } from './kubeconfig';
import { log4shell } from './log4shell';
import { mysqlDump } from './mysql-dump';
import { pdfDocument } from './pdf-document';
import { qrCode } from './qr-code';
import { ragMarker } from './rag-marker';
import { sensitiveCommand } from './sensitive-command';
import { slowRedirect } from './slow-redirect';
import { svn } from './svn';
import { url } from './url';
import { webImage } from './web-image';
import { windowsFolder } from './windows-folder';
import { wireguard } from './wireguard';
import { wordDocument } from './word-document';

/** Every kind that can be planted, by its API name: one line per kind. */
export const KINDS = {
  api_key: apiKey,
  aws_access_key: awsAccessKey,
  database_url: databaseUrl,
  url,
  email,
  rag_marker: ragMarker,
  dns,
  kubeconfig,
  fast_redirect: fastRedirect,
  web_image: webImage,
  qr_code: qrCode,
  word_document: wordDocument,
  excel_document: excelDocument,
  log4shell,
  pdf_document: pdfDocument,
  windows_folder: windowsFolder,
  sensitive_command: sensitiveCommand,
  mysql_dump: mysqlDump,
  wireguard,
  cloned_website: clonedWebsite,
  svn,
  slow_redirect: slowRedirect,
} satisfies Record<string, KindModule>;

export type CanaryKind = keyof typeof KINDS;
export const CANARY_KINDS = Object.keys(KINDS) as [CanaryKind, ...CanaryKind[]];

export function makeDecoy(
  kind: CanaryKind,
  settings: DecoySettings,
  options: PlantOptions = {},
): Planted {
  return KINDS[kind].make(settings, options);
}

/** The client a hit of this kind reveals, for an alert whose owner did not say where it was planted. */
export function hitPlatform(kind: CanaryKind, source: HitSource): string {
  const module: KindModule = KINDS[kind];
  return module.platform?.(source) ?? platformOf(source.userAgent);
}

export type { Artifact, KindModule, Planted, PlantOptions } from './kind';
export { platformOf } from './kind';
