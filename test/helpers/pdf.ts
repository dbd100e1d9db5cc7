/**
 * Minimal hand-written PDFs for tests: `pages` pages, each showing `text` from a FlateDecode content
 * stream, with the page objects either plain or packed in a compressed object stream (PDF 1.5+).
 */
import { deflateSync } from 'node:zlib';

export interface PdfOptions {
  /** Pack the page objects in a `/Type /ObjStm` stream, where a plain scan of the file cannot see them. */
  readonly objectStream?: boolean;
  readonly text?: string;
}

export function makePdf(pages: number, options: PdfOptions = {}): Buffer {
  const text = options.text ?? 'Hello, page';
  const objects: string[] = [];
  const streams: Buffer[] = [];
  const pageIds = Array.from({ length: pages }, (_, index) => 3 + index * 2);
  const body: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const object = (id: number, dictionary: string, stream?: Buffer) => {
    const head = stream === undefined ? `${id} 0 obj\n${dictionary}\nendobj\n` : `${id} 0 obj\n${dictionary}\nstream\n`;
    body.push(Buffer.from(head, 'latin1'));
    if (stream !== undefined) body.push(stream, Buffer.from('\nendstream\nendobj\n', 'latin1'));
  };
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages} >>`);
  for (const [index, id] of pageIds.entries()) {
    const page = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${id + 1} 0 R >>`;
    if (options.objectStream) objects.push(`${id}`, page);
    else object(id, page);
    const content = deflateSync(Buffer.from(`BT /F1 12 Tf 72 720 Td (${text} ${index + 1}) Tj ET`, 'latin1'));
    streams.push(content);
    object(id + 1, `<< /Length ${content.length} /Filter /FlateDecode >>`, content);
  }
  if (options.objectStream) {
    // An object stream: "id offset" pairs, then the objects (PDF 32000-1:2008, 7.5.7).
    const entries: string[] = [];
    const bodies: string[] = [];
    let offset = 0;
    for (let index = 0; index < objects.length; index += 2) {
      entries.push(`${objects[index]} ${offset}`);
      bodies.push(objects[index + 1]);
      offset += objects[index + 1].length + 1;
    }
    const header = `${entries.join(' ')}\n`;
    const packed = deflateSync(Buffer.from(header + bodies.join('\n'), 'latin1'));
    object(3 + pages * 2, `<< /Type /ObjStm /N ${pages} /First ${header.length} /Length ${packed.length} /Filter /FlateDecode >>`, packed);
  }
  body.push(Buffer.from('trailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1'));
  return Buffer.concat(body);
}

/** A PDF of one page whose content stream inflates to `inflated` zero bytes: a compressed bomb. */
export function pdfBomb(inflated: number): Buffer {
  const bomb = deflateSync(Buffer.alloc(inflated), { level: 9 });
  return Buffer.concat([
    Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n', 'latin1'),
    Buffer.from('3 0 obj\n<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>\nendobj\n', 'latin1'),
    Buffer.from(`4 0 obj\n<< /Length ${bomb.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'),
    bomb,
    Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1'),
  ]);
}
