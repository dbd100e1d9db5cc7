/** The list of what is running now (src/core/linked-list.ts). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LinkedList } from '../../src/core/linked-list.ts';

describe('LinkedList', () => {
  test('members in the order they were added; any one taken out by its link, once', () => {
    const list = new LinkedList<string>();
    const links = ['a', 'b', 'c', 'd'].map((value) => list.add(value));
    assert.deepEqual([...list], ['a', 'b', 'c', 'd']);
    links[0].remove();
    links[2].remove();
    links[2].remove();
    assert.deepEqual([...list], ['b', 'd']);
    assert.equal(list.size, 2);
    assert.equal(links[2].listed, false);
    assert.equal(links[1].listed, true);
    links[3].remove();
    assert.deepEqual([...list], ['b']);
    list.add('e');
    assert.deepEqual([...list], ['b', 'e'], 'the last taken out, the next added goes after what is left');
    links[1].remove();
    assert.deepEqual([...list], ['e']);
    assert.equal(list.size, 1);
  });

  test('emptied and filled again', () => {
    const list = new LinkedList<number>();
    const only = list.add(1);
    only.remove();
    assert.deepEqual([...list], []);
    assert.equal(list.size, 0);
    list.add(2);
    list.add(3);
    assert.deepEqual([...list], [2, 3]);
  });

  test('a link taken out keeps neither neighbour', () => {
    const list = new LinkedList<number>();
    list.add(1);
    const middle = list.add(2);
    list.add(3);
    middle.remove();
    assert.equal(middle.prev, undefined);
    assert.equal(middle.next, undefined);
    assert.deepEqual(
      [...list.links()].map((link) => link.value),
      [1, 3],
    );
  });
});
