/**
 * Bytes handed to a parser that is not ours. A small `Buffer` (from `Buffer.from` of base64, or a
 * slice) is a view into a pool shared with other requests, and a parser that builds a `DataView`
 * over `data.buffer` (image-size does) reads past the view's end into bytes of someone else's
 * request. Such parsers get a copy that owns its memory, whose `buffer` is exactly the bytes they
 * may read.
 */
export function ownBytes(data: Uint8Array): Uint8Array {
  if (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && !(data.buffer instanceof SharedArrayBuffer)) return data;
  // Uint8Array.prototype.slice copies into a new ArrayBuffer (Buffer#slice would be another view).
  return Uint8Array.prototype.slice.call(data);
}
