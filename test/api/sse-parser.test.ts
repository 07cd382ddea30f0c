import { describe, expect, it } from 'vitest';
import { SseParser, type SseMessage } from '../../src/api/client/sse/parser.js';

const STREAM =
  '\uFEFF: hello\n' +
  'retry: 1500\n' +
  'id: 1\r\nevent: endpoint.created\r\ndata: {"a":"é€😀"}\r\n\r\n' +
  'data: line one\rdata: line two\r\r' +
  ':heartbeat\n\n' +
  'id: 3\nevent: ready\ndata\n\n' +
  'event: ignored-no-data\n\n' +
  'id\ndata:  two spaces\nunknown: x\n\n' +
  'id: bad\0id\ndata: x\n\n' +
  'data: unterminated';

const EXPECTED: SseMessage[] = [
  { id: '1', event: 'endpoint.created', data: '{"a":"é€😀"}' },
  { id: '1', event: 'message', data: 'line one\nline two' },
  { id: '3', event: 'ready', data: '' },
  { id: '', event: 'message', data: ' two spaces' },
  { id: '', event: 'message', data: 'x' },
];

function run(chunks: Uint8Array[]): { messages: SseMessage[]; comments: string[]; retries: number[] } {
  const comments: string[] = [];
  const retries: number[] = [];
  const p = new SseParser({ onComment: (t) => comments.push(t), onRetry: (ms) => retries.push(ms) });
  const messages: SseMessage[] = [];
  for (const c of chunks) messages.push(...p.push(c));
  messages.push(...p.end());
  return { messages, comments, retries };
}

describe('SseParser', () => {
  const bytes = new TextEncoder().encode(STREAM);

  it('parses a whole stream', () => {
    const r = run([bytes]);
    expect(r.messages).toEqual(EXPECTED);
    expect(r.comments).toEqual(['hello', 'heartbeat']);
    expect(r.retries).toEqual([1500]);
  });

  it('gives the same result for every split into two chunks (inside UTF-8 sequences and CRLF too)', () => {
    for (let i = 0; i <= bytes.length; i++) {
      const r = run([bytes.slice(0, i), bytes.slice(i)]);
      expect(r.messages, `split at ${i}`).toEqual(EXPECTED);
      expect(r.comments).toEqual(['hello', 'heartbeat']);
    }
  });

  it('gives the same result one byte at a time and in random chunks', () => {
    expect(run([...bytes].map((b) => Uint8Array.of(b))).messages).toEqual(EXPECTED);
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 9;
    for (let round = 0; round < 50; round++) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length;) {
        const n = 1 + Math.floor(rand());
        chunks.push(bytes.slice(i, i + n));
        i += n;
      }
      expect(run(chunks).messages).toEqual(EXPECTED);
    }
  });

  it('accepts string chunks and keeps the last event id across messages', () => {
    const p = new SseParser();
    expect(p.push('id: 7\ndata: a\n\ndata: b\n')).toEqual([{ id: '7', event: 'message', data: 'a' }]);
    expect(p.push('\n')).toEqual([{ id: '7', event: 'message', data: 'b' }]);
    expect(p.lastEventId).toBe('7');
  });

  it('treats a CR at a chunk end followed by LF as one line break, and a lone CR as a break', () => {
    const p = new SseParser();
    expect(p.push('data: a\r')).toEqual([]);
    expect(p.push('\n\r')).toEqual([{ id: '', event: 'message', data: 'a' }]);
    expect(p.push('data: b\r\r')).toEqual([{ id: '', event: 'message', data: 'b' }]);
  });
});
