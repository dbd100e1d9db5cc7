/**
 * A JSON value that is already serialized. A response body is serialized once, for the client,
 * and the same text is what the request log stores: a 1 KB completion stringified a second time
 * cost as much as a SQLite insert.
 */
export class JsonText {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  static of(value: unknown): JsonText {
    return new JsonText(JSON.stringify(value));
  }
}
