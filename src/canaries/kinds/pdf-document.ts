import { newDnsName } from '../decoys';
import type { KindModule } from './kind';
import { officeLook } from './office-look';

/** A PDF string literal: backslashes and parentheses escaped. */
const literal = (text: string) => `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`;
/** `D:YYYYMMDDHHmmSSZ`, the PDF date form. */
const pdfDate = (date: Date) => `D:${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;

export const pdfDocument: KindModule = {
  howToUse:
    'Download the PDF and leave it where an intruder looks (a mailbox, a file share, a laptop’s Documents) under a name worth opening. When Adobe Acrobat or Acrobat Reader opens it, the document’s open action names a host in this service’s DNS zone, which Acrobat resolves; the lookup fires (the resolver is recorded, not the reader). Readers that ignore open actions (browsers’ built-in viewers, Preview, poppler) open it as an ordinary one-page document and do not fire it; nor does a machine without DNS to the internet.',
  risk: {
    base: 50,
    what: 'A decoy PDF document',
    action:
      'Someone opened the PDF where you left it; treat that mailbox, share or machine as exposed',
  },
  relay: 'dns',
  make: (settings) => {
    const { name, token } = newDnsName(settings);
    const look = officeLook('pdf');
    const lines = [look.title, '', ...look.paragraphs];
    const text = lines
      .map(
        (line, i) => `BT /F1 ${i === 0 ? 18 : 11} Tf 72 ${770 - i * 22} Td ${literal(line)} Tj ET`,
      )
      .join('\n');
    const { author, created, modified } = look.properties;
    const objects = [
      '<< /Type /Catalog /Pages 2 0 R /OpenAction 5 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> >>',
      `<< /Length ${Buffer.byteLength(text, 'latin1')} >>\nstream\n${text}\nendstream`,
      `<< /Type /Action /S /URI /URI ${literal(`https://${name}/`)} >>`,
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
      `<< /Title ${literal(look.title)} /Author ${literal(author)} /Creator (Microsoft\\256 Word for Microsoft 365) /Producer (Microsoft\\256 Word for Microsoft 365) /CreationDate (${pdfDate(created)}) /ModDate (${pdfDate(modified)}) >>`,
    ];
    let pdf = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
    const offsets = objects.map((body, i) => {
      const offset = Buffer.byteLength(pdf, 'latin1');
      pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
      return offset;
    });
    const xref = Buffer.byteLength(pdf, 'latin1');
    pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
    pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info ${objects.length} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
    return {
      value: name,
      tokens: [token],
      artifact: {
        filename: look.filename,
        contentType: 'application/pdf',
        body: Buffer.from(pdf, 'latin1'),
      },
    };
  },
  platform: () => 'Acrobat Reader',
};
