import { describe, expect, it } from 'vitest';
import { Notice } from '../../src/time/notice.js';

describe('Notice', () => {
  it('tells every subscriber, in the order they subscribed, each time', () => {
    const notice = new Notice();
    const seen: string[] = [];
    notice.tell();
    notice.subscribe(() => seen.push('a'));
    notice.subscribe(() => seen.push('b'));
    notice.tell();
    notice.tell();
    expect(seen, 'calls after two tells (the tell before subscribing reached no one)').toEqual([
      'a',
      'b',
      'a',
      'b',
    ]);
  });
});
