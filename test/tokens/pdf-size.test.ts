/**
 * PDFs are measured from their bytes in bounded work (src/tokens/pdf-size.ts): pages counted in
 * plain and compressed object streams (hand-written and written by pdf-lib), text bounded by decoded content, a compressed bomb stopped at
 * the inflation limit, and bytes that are no readable PDF refused.
 */
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { pdfTokenBound } from '../../src/tokens/document-tokens.ts';
import { imageTokens, UNKNOWN_IMAGE } from '../../src/tokens/image-tokens.ts';
import { MAX_PDF_INFLATED_BYTES, measurePdf, PdfRefused } from '../../src/tokens/pdf-size.ts';
import { makePdf, pdfBomb } from '../helpers/pdf.ts';

describe('measuring a PDF', () => {
  test('counts the page objects of a plain PDF, not the page tree', () => {
    assert.equal(measurePdf(makePdf(1)).pages, 1);
    assert.equal(measurePdf(makePdf(7)).pages, 7);
  });

  test('counts the pages packed in a compressed object stream', () => {
    const pdf = makePdf(5, { objectStream: true });
    assert.equal(pdf.toString('latin1').match(/\/Type \/Page\b/g), null, 'no page object is visible uncompressed');
    assert.equal(measurePdf(pdf).pages, 5);
  });

  for (const useObjectStreams of [true, false]) {
    test(`counts the pages of a PDF written by pdf-lib (${useObjectStreams ? 'object and cross-reference streams' : 'a classic file'})`, async () => {
      const document = await PDFDocument.create();
      const font = await document.embedFont(StandardFonts.Helvetica);
      const line = 'The quarterly report, page ';
      for (let page = 1; page <= 4; page++) document.addPage([612, 792]).drawText(`${line}${page}`, { x: 72, y: 720, size: 12, font });
      const pdf = await document.save({ useObjectStreams });
      const size = measurePdf(pdf);
      assert.equal(size.pages, 4);
      assert.ok(size.textBytes >= 4 * line.length, `${size.textBytes} text bytes`);
    });
  }

  test('a stream keyword inside a string hides no page from the count', () => {
    const pdf = makePdf(3);
    const header = pdf.indexOf('\n', pdf.indexOf('%PDF-') + 10) + 1;
    const decoy = Buffer.from('9 0 obj\n<< /Title (a stream\n) >>\nendobj\n', 'latin1');
    assert.equal(measurePdf(Buffer.concat([pdf.subarray(0, header), decoy, pdf.subarray(header)])).pages, 3);
  });

  test('bounds the text by the bytes outside streams plus the inflated content streams', () => {
    const text = 'x'.repeat(10_000);
    const pdf = makePdf(2, { text });
    const { textBytes } = measurePdf(pdf);
    // Each page shows the 10,000 characters; the compressed file is far smaller than its text.
    assert.ok(pdf.length < 2 * text.length, `${pdf.length} bytes`);
    assert.ok(textBytes >= 2 * text.length, `${textBytes} text bytes`);
    assert.ok(textBytes < 2 * text.length + pdf.length, `${textBytes} text bytes`);
  });

  test('skips image streams without inflating them', () => {
    const image = deflateSync(Buffer.alloc(MAX_PDF_INFLATED_BYTES + 1));
    const pdf = Buffer.concat([
      makePdf(1),
      Buffer.from(`9 0 obj\n<< /Type /XObject /Subtype /Image /Width 8000 /Height 8000 /Length ${image.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'),
      image,
      Buffer.from('\nendstream\nendobj\n', 'latin1'),
    ]);
    assert.equal(measurePdf(pdf).pages, 1);
  });

  test('refuses a compressed bomb at the inflation limit', () => {
    const bomb = pdfBomb(MAX_PDF_INFLATED_BYTES + 1);
    assert.ok(bomb.length < 64 * 1024, `${bomb.length} bytes`);
    assert.throws(
      () => measurePdf(bomb),
      (error) => error instanceof PdfRefused && /inflate to more than/.test(error.message),
    );
    // Just under the limit is a PDF like any other.
    assert.equal(measurePdf(pdfBomb(1024 * 1024)).pages, 1);
  });

  test('refuses garbage, a truncated file, a PDF of no page and a filter it cannot bound', () => {
    const refused = (bytes: Uint8Array, reason: RegExp) =>
      assert.throws(
        () => measurePdf(bytes),
        (error) => error instanceof PdfRefused && reason.test(error.message),
      );
    refused(Buffer.from('GIF89a not a document at all'), /not a PDF/);
    refused(Buffer.alloc(0), /not a PDF/);
    refused(Buffer.from('%PDF-'), /no page/);
    const pdf = makePdf(3);
    const cut = pdf.subarray(0, pdf.indexOf('stream\n') + 12);
    refused(cut, /stream has no end|not valid zlib/);
    const lzw = Buffer.concat([makePdf(1), Buffer.from('9 0 obj\n<< /Length 4 /Filter /LZWDecode >>\nstream\nabcd\nendstream\nendobj\n', 'latin1')]);
    refused(lzw, /LZWDecode/);
    const corrupt = Buffer.concat([makePdf(1), Buffer.from('9 0 obj\n<< /Length 4 /Filter /FlateDecode >>\nstream\nabcd\nendstream\nendobj\n', 'latin1')]);
    refused(corrupt, /not valid zlib/);
  });
});

describe('PDF token bounds per provider family', () => {
  const withMargin = (tokens: number) => Math.ceil((tokens * 11) / 10);
  const size = { pages: 3, textBytes: 5000 };

  test('each family: an image of each page plus one token per byte of text, with the margin', () => {
    assert.equal(pdfTokenBound('anthropic', size), withMargin(3 * Math.ceil((1568 * 1568) / 750) + 5000));
    assert.equal(pdfTokenBound('openai', size), withMargin(3 * Math.ceil(1536 * 2.46) + 5000));
    assert.equal(pdfTokenBound('gemini', size), withMargin(3 * 1120 + 5000));
  });

  test('a route of no known family takes the largest page', () => {
    const largest = Math.max(imageTokens('openai', UNKNOWN_IMAGE), imageTokens('anthropic', UNKNOWN_IMAGE), 1120);
    assert.equal(pdfTokenBound(undefined, size), withMargin(3 * largest + 5000));
  });
});
