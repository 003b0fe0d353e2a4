import type { RequestHandler } from 'express';
import { operationsFor } from '../http/operation';
import { DomainError } from '../errors';
import { openApiDocumentView, type OpenApiDocument } from './document';
import { REFERENCE_ASSETS, REFERENCE_PAGE_POLICY } from './reference-page';

export interface ReferenceDeps {
  document: OpenApiDocument;
  /** The readable page, rendered once from the document. */
  page: string;
  /** DOCS_TOKEN, when set. */
  docsToken: RequestHandler;
}
const operation = operationsFor<ReferenceDeps>('Operations');

/** The API reference: the OpenAPI document and its readable page (behind DOCS_TOKEN if set). */
export const referenceOperations = [
  operation({
    operationId: 'getOpenApiDocument',
    method: 'get',
    path: '/openapi.json',
    summary: 'This document',
    auth: 'none',
    beforeKeyLayer: true,
    before: ({ docsToken }) => [docsToken],
    success: { status: 200, description: 'The OpenAPI 3.1 document' },
    response: openApiDocumentView,
    errors: { 401: 'DOCS_TOKEN is set and `Authorization: Bearer <DOCS_TOKEN>` was not sent' },
    handler: (_input, { document }) => document,
  }),
  operation({
    operationId: 'getReferencePage',
    method: 'get',
    path: '/docs',
    summary: 'This reference as a readable page',
    auth: 'none',
    beforeKeyLayer: true,
    before: ({ docsToken }) => [docsToken],
    success: { status: 200, description: 'HTML', contentType: 'text/html' },
    errors: { 401: 'DOCS_TOKEN is set and `Authorization: Bearer <DOCS_TOKEN>` was not sent' },
    handler: ({ res }, { page }) => {
      res.set('Content-Security-Policy', REFERENCE_PAGE_POLICY).type('html').send(page);
    },
  }),
  operation({
    operationId: 'getReferenceAsset',
    method: 'get',
    path: '/docs/assets/{file}',
    summary: "The readable page's scripts: Redoc's standalone bundle and its start-up",
    auth: 'none',
    beforeKeyLayer: true,
    before: ({ docsToken }) => [docsToken],
    success: { status: 200, description: 'JavaScript', contentType: 'application/javascript' },
    errors: { 401: 'DOCS_TOKEN is set and `Authorization: Bearer <DOCS_TOKEN>` was not sent' },
    handler: ({ params, res }) => {
      const asset = Object.hasOwn(REFERENCE_ASSETS, params.file!) && REFERENCE_ASSETS[params.file!];
      if (!asset) throw new DomainError('not_found', `No reference asset ${params.file}`);
      res.set('Cache-Control', 'no-cache').type(asset.type).send(asset.body());
    },
  }),
];
