import { randomInt } from 'node:crypto';
import { newTripwireUrl } from '../decoys';
import type { KindModule } from './kind';
import { escapeXml, officePackage, relationships } from './ooxml';
import { officeLook, platformFromAgent } from './office-look';

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XDR = 'http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n';
const SHEET_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml';

/** The least a workbook's styles part holds: one font, the two required fills, one border, one format. */
const STYLES = `${XML}<styleSheet xmlns="${MAIN}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs></styleSheet>`;

const DEPARTMENTS = ['Engineering', 'Finance', 'Sales', 'Operations', 'Legal', 'Marketing'];

export const excelDocument: KindModule = {
  howToUse:
    'Download the .xlsx and leave it where an intruder browses (a file share, a backup, a mailbox) under a name worth opening. Opening it in Excel fetches a linked picture on the sheet from this service’s tripwire URL, which fires; LibreOffice Calc fetches it too. It does not fire in Protected View (downloaded or mailed files) until editing is enabled, in previews and web viewers, or where the machine cannot reach this service.',
  risk: {
    base: 55,
    what: 'A decoy Excel workbook',
    action:
      'Someone opened the workbook where you left it; treat that file share, mailbox or machine as exposed',
  },
  make: (settings) => {
    const { url, token } = newTripwireUrl(settings, 'i');
    const look = officeLook('xlsx');
    const cell = (ref: string, value: string | number) =>
      typeof value === 'number'
        ? `<c r="${ref}"><v>${value}</v></c>`
        : `<c r="${ref}" t="inlineStr"><is><t>${escapeXml(value)}</t></is></c>`;
    const rows = [
      [look.title],
      ['Department', 'Headcount', 'Budget (EUR)', 'Spent (EUR)'],
      ...DEPARTMENTS.map((name) => {
        const budget = randomInt(200, 2_000) * 1_000;
        return [name, randomInt(4, 60), budget, Math.round(budget * (0.4 + Math.random() * 0.5))];
      }),
    ];
    const sheetData = rows
      .map(
        (row, r) =>
          `<row r="${r + 1}">${row.map((v, c) => cell(`${String.fromCharCode(65 + c)}${r + 1}`, v)).join('')}</row>`,
      )
      .join('');
    const sheet = `${XML}<worksheet xmlns="${MAIN}" xmlns:r="${R}"><cols><col min="1" max="1" width="28" customWidth="1"/><col min="2" max="4" width="16" customWidth="1"/></cols><sheetData>${sheetData}</sheetData><drawing r:id="rId1"/></worksheet>`;
    // A one-pixel picture, linked rather than embedded: Excel fetches it when the sheet opens.
    const drawing = `${XML}<xdr:wsDr xmlns:xdr="${XDR}" xmlns:a="${A}" xmlns:r="${R}"><xdr:oneCellAnchor><xdr:from><xdr:col>6</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>0</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:ext cx="9525" cy="9525"/><xdr:pic><xdr:nvPicPr><xdr:cNvPr id="2" name="Picture 1"/><xdr:cNvPicPr/></xdr:nvPicPr><xdr:blipFill><a:blip r:link="rId1"/><a:stretch><a:fillRect/></a:stretch></xdr:blipFill><xdr:spPr><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></xdr:spPr></xdr:pic><xdr:clientData/></xdr:oneCellAnchor></xdr:wsDr>`;
    const workbook = `${XML}<workbook xmlns="${MAIN}" xmlns:r="${R}"><sheets><sheet name="Summary" sheetId="1" r:id="rId1"/></sheets></workbook>`;
    const body = officePackage(
      { part: 'xl/workbook.xml', contentType: `${SHEET_TYPE}.sheet.main+xml` },
      {
        'xl/workbook.xml': workbook,
        'xl/styles.xml': STYLES,
        'xl/_rels/workbook.xml.rels': relationships([
          { id: 'rId1', type: 'worksheet', target: 'worksheets/sheet1.xml' },
          { id: 'rId2', type: 'styles', target: 'styles.xml' },
        ]),
        'xl/worksheets/sheet1.xml': sheet,
        'xl/worksheets/_rels/sheet1.xml.rels': relationships([
          { id: 'rId1', type: 'drawing', target: '../drawings/drawing1.xml' },
        ]),
        'xl/drawings/drawing1.xml': drawing,
        'xl/drawings/_rels/drawing1.xml.rels': relationships([
          { id: 'rId1', type: 'image', target: `${url}.gif`, external: true },
        ]),
      },
      {
        'xl/worksheets/sheet1.xml': `${SHEET_TYPE}.worksheet+xml`,
        'xl/styles.xml': `${SHEET_TYPE}.styles+xml`,
        'xl/drawings/drawing1.xml': 'application/vnd.openxmlformats-officedocument.drawing+xml',
      },
      { ...look.properties, application: 'Microsoft Excel' },
    );
    return {
      value: url,
      tokens: [token],
      artifact: { filename: look.filename, contentType: `${SHEET_TYPE}.sheet`, body },
    };
  },
  platform: (source) => platformFromAgent(source.userAgent, 'Excel'),
};
