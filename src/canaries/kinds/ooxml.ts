import { strToU8, zipSync, type Zippable } from 'fflate';

/**
 * Office Open XML packages (.docx, .xlsx) assembled from their parts: a zip of XML files, the
 * way Word and Excel write them (deflated, `[Content_Types].xml` first), with the document
 * properties a real file has (author, company, dates, application).
 */

export interface OfficeProperties {
  title: string;
  author: string;
  company: string;
  /** Created and last saved: a real document is saved some time after it was started. */
  created: Date;
  modified: Date;
  /** `docProps/app.xml`'s application, e.g. `Microsoft Office Word`. */
  application: string;
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';

export const escapeXml = (text: string): string =>
  text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface Relationship {
  id: string;
  type: string;
  target: string;
  external?: boolean;
}

/** A `.rels` part. */
export function relationships(rels: Relationship[]): string {
  const items = rels.map(
    (r) =>
      `<Relationship Id="${r.id}" Type="${r.type.startsWith('http') ? r.type : `${REL}/${r.type}`}" Target="${escapeXml(r.target)}"${r.external ? ' TargetMode="External"' : ''}/>`,
  );
  return `${XML}<Relationships xmlns="${PKG_REL}">${items.join('')}</Relationships>`;
}

/** The package: content types, the root relationships, the properties and the given parts. */
export function officePackage(
  main: { part: string; contentType: string },
  parts: Record<string, string>,
  overrides: Record<string, string>,
  properties: OfficeProperties,
): Buffer {
  const iso = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;
  const contentTypes = `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="gif" ContentType="image/gif"/>${Object.entries(
    {
      [main.part]: main.contentType,
      ...overrides,
      'docProps/core.xml': 'application/vnd.openxmlformats-package.core-properties+xml',
      'docProps/app.xml': 'application/vnd.openxmlformats-officedocument.extended-properties+xml',
    },
  )
    .map(([part, type]) => `<Override PartName="/${part}" ContentType="${type}"/>`)
    .join('')}</Types>`;
  const rootRels = relationships([
    { id: 'rId1', type: 'officeDocument', target: main.part },
    { id: 'rId2', type: `${PKG_REL}/metadata/core-properties`, target: 'docProps/core.xml' },
    { id: 'rId3', type: 'extended-properties', target: 'docProps/app.xml' },
  ]);
  const core = `${XML}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title>${escapeXml(properties.title)}</dc:title><dc:creator>${escapeXml(properties.author)}</dc:creator><cp:lastModifiedBy>${escapeXml(properties.author)}</cp:lastModifiedBy><cp:revision>3</cp:revision><dcterms:created xsi:type="dcterms:W3CDTF">${iso(properties.created)}</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">${iso(properties.modified)}</dcterms:modified></cp:coreProperties>`;
  const app = `${XML}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Template>Normal.dotm</Template><TotalTime>47</TotalTime><Application>${escapeXml(properties.application)}</Application><DocSecurity>0</DocSecurity><Company>${escapeXml(properties.company)}</Company><AppVersion>16.0000</AppVersion></Properties>`;
  const files: Zippable = {};
  const mtime = properties.modified;
  const add = (path: string, text: string) => {
    files[path] = [strToU8(text), { level: 6, mtime }];
  };
  add('[Content_Types].xml', contentTypes);
  add('_rels/.rels', rootRels);
  add('docProps/core.xml', core);
  add('docProps/app.xml', app);
  for (const [path, text] of Object.entries(parts)) add(path, text);
  return Buffer.from(zipSync(files));
}
