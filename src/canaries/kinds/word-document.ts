import { newTripwireUrl } from '../decoys';
import type { KindModule } from './kind';
import { escapeXml, officePackage, relationships } from './ooxml';
import { officeLook, platformFromAgent } from './office-look';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const WP = 'http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const PIC = 'http://schemas.openxmlformats.org/drawingml/2006/picture';
/** One pixel, in EMUs: the linked picture is there, but nobody sees it. */
const PIXEL = 9525;

export const wordDocument: KindModule = {
  howToUse:
    'Download the .docx and leave it where an intruder browses (a file share, a mailbox, a desktop) under a name worth opening. Opening it in Word fetches a linked picture from this service’s tripwire URL (an INCLUDEPICTURE field, as Word writes one), which fires; LibreOffice Writer fetches it too. It does not fire in Protected View (files from the internet or mail attachments) until editing is enabled, in viewers that do not load linked pictures (previews, Google Docs), or where the machine cannot reach this service.',
  risk: {
    base: 55,
    what: 'A decoy Word document',
    action:
      'Someone opened the document where you left it; treat that file share, mailbox or machine as exposed',
  },
  make: (settings) => {
    const { url, token } = newTripwireUrl(settings, 'i');
    const look = officeLook('docx');
    const paragraph = (text: string, style = '') =>
      `<w:p>${style && `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>`}<w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r></w:p>`;
    const linkedPicture = `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> INCLUDEPICTURE  "${escapeXml(`${url}.gif`)}" \\d </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="${PIXEL}" cy="${PIXEL}"/><wp:docPr id="1" name="Picture 1"/><a:graphic><a:graphicData uri="${PIC}"><pic:pic><pic:nvPicPr><pic:cNvPr id="0" name="image001.gif"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:link="rId9"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="${PIXEL}" cy="${PIXEL}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`;
    const document = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<w:document xmlns:w="${W}" xmlns:r="${R}" xmlns:wp="${WP}" xmlns:a="${A}" xmlns:pic="${PIC}"><w:body>${[
      paragraph(look.title, 'Title'),
      ...look.paragraphs.map((text) => paragraph(text)),
      linkedPicture,
    ].join(
      '',
    )}<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>`;
    const styles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<w:styles xmlns:w="${W}"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri"/><w:sz w:val="22"/></w:rPr></w:rPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:pPr><w:spacing w:after="160" w:line="259" w:lineRule="auto"/></w:pPr></w:style><w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:rPr><w:sz w:val="48"/></w:rPr></w:style></w:styles>`;
    const body = officePackage(
      {
        part: 'word/document.xml',
        contentType:
          'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml',
      },
      {
        'word/document.xml': document,
        'word/styles.xml': styles,
        'word/_rels/document.xml.rels': relationships([
          { id: 'rId1', type: 'styles', target: 'styles.xml' },
          { id: 'rId9', type: 'image', target: `${url}.gif`, external: true },
        ]),
      },
      {
        'word/styles.xml':
          'application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml',
      },
      { ...look.properties, application: 'Microsoft Office Word' },
    );
    return {
      value: url,
      tokens: [token],
      artifact: {
        filename: look.filename,
        contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        body,
      },
    };
  },
  platform: (source) => platformFromAgent(source.userAgent, 'Word'),
};
