/**
 * A V8 heap snapshot (.heapsnapshot, as node:v8 writeHeapSnapshot writes it) summarised by what
 * holds the bytes: self size and count per node type and constructor name, and the difference of
 * two such summaries per held connection. Node's own objects (Http2Stream, TCPWrap, nghttp2
 * memory…) appear as `native` nodes with the sizes Node's MemoryTracker reports for them.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

const Snapshot = z.object({
  snapshot: z.object({
    meta: z.object({
      node_fields: z.array(z.string()),
      node_types: z.array(z.union([z.array(z.string()), z.string()])),
    }),
  }),
  nodes: z.array(z.number()),
  strings: z.array(z.string()),
});

export type HeapSummary = Map<string, { count: number; bytes: number }>;

/** The group a node is counted in: strings and code together, objects by constructor. */
function groupOf(type: string, name: string): string {
  if (type.includes('string')) return '(strings)';
  if (type === 'code') return '(compiled code)';
  if (type === 'number') return '(heap numbers)';
  if (type === 'array') return `(array ${name.length > 40 ? name.slice(0, 40) + '…' : name})`;
  if (type === 'closure') return `(closure) ${name || '(anonymous)'}`;
  return `${type === 'object' ? '' : `(${type}) `}${name.length > 60 ? name.slice(0, 60) + '…' : name}`;
}

export async function summarizeHeapSnapshot(file: string): Promise<HeapSummary> {
  const s = Snapshot.parse(JSON.parse(await readFile(file, 'utf8')));
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  if (!Array.isArray(types)) throw new Error(`${file}: node_types[0] is not the list of types`);
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const out: HeapSummary = new Map();
  for (let i = 0; i < s.nodes.length; i += fields.length) {
    const key = groupOf(types[s.nodes[i + iType!]!] ?? '?', s.strings[s.nodes[i + iName!]!] ?? '?');
    const e = out.get(key) ?? { count: 0, bytes: 0 };
    e.count++;
    e.bytes += s.nodes[i + iSize!]!;
    out.set(key, e);
  }
  return out;
}

/** Pure: per held connection, the groups that grew most between `before` and `after`. */
export function perConnectionGrowth(
  before: HeapSummary,
  after: HeapSummary,
  connections: number,
  top = 20,
): { group: string; count: number; bytes: number }[] {
  const rows = [...after].map(([group, a]) => {
    const b = before.get(group) ?? { count: 0, bytes: 0 };
    return { group, count: (a.count - b.count) / connections, bytes: (a.bytes - b.bytes) / connections };
  });
  return rows.sort((x, y) => y.bytes - x.bytes).slice(0, top);
}
