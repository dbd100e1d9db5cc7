/**
 * A list of what is running now (open streams, their deadlines), for a structure that lives as long
 * as the process while its members come and go by the thousand a second. A `Set` there cost each
 * member far more than its add and delete: measured with a stream per member, the garbage
 * collection's time per streamed request was 72 µs with the stopping server's open streams kept in
 * a `Set`, and 21 µs with them kept in this list (docs/performance.md, "What a stream's
 * registrations cost the garbage collector"). A member is linked in and out in constant time, by
 * the link it was given.
 */
export class LinkedList<T> {
  #first: Link<T> | undefined;
  #last: Link<T> | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds `value` last; its link takes it out again. */
  add(value: T): Link<T> {
    const link = new Link(this, value, this.#last);
    if (this.#last === undefined) this.#first = link;
    else this.#last.next = link;
    this.#last = link;
    this.#size++;
    return link;
  }

  /** The members in the order they were added. Not to be changed while walked: copy it first (`[...list]`) to act on them. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (const link of this.links()) yield link.value;
  }

  /** The members' links, in the same order and on the same terms. */
  *links(): IterableIterator<Link<T>> {
    for (let link = this.#first; link !== undefined; link = link.next) yield link;
  }

  /** Called by a link: takes it out. */
  unlink(link: Link<T>): void {
    if (link.prev === undefined) this.#first = link.next;
    else link.prev.next = link.next;
    if (link.next === undefined) this.#last = link.prev;
    else link.next.prev = link.prev;
    this.#size--;
  }
}

/** A member's place in a {@link LinkedList}. */
export class Link<T> {
  readonly value: T;
  #list: LinkedList<T> | undefined;
  prev: Link<T> | undefined;
  next: Link<T> | undefined;

  constructor(list: LinkedList<T>, value: T, prev: Link<T> | undefined) {
    this.#list = list;
    this.value = value;
    this.prev = prev;
  }

  /** Whether the member is still in its list. */
  get listed(): boolean {
    return this.#list !== undefined;
  }

  /** Takes the member out of its list. Idempotent. */
  remove(): void {
    if (this.#list === undefined) return;
    this.#list.unlink(this);
    // Unlinked both ways: a link kept by its member must not keep its old neighbours alive.
    this.#list = undefined;
    this.prev = undefined;
    this.next = undefined;
  }
}
