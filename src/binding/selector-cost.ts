import type { ASTNode } from '@marcbachmann/cel-js';

/**
 * A static worst-case cost of a selector over the documented input sizes, as Kubernetes
 * estimates CEL in CRD validation and admission policies: every node gets an upper bound of the
 * work it does (in abstract steps: one per comparison, per character touched, per loop turn) and
 * of the size of what it returns. A comprehension multiplies its body by the length of what it
 * iterates; `+` adds sizes, so `cel.bind` chains that double a string are seen growing. Pure.
 */

/** The largest value each `endpoint` field can hold (the API's limits; docs/projection.md). */
export const ENDPOINT_FIELD_MAX: Readonly<Record<string, number>> = {
  id: 64,
  url: 300,
  scheme: 4,
  host: 253,
  name: 63,
  namespace: 63,
  port: 1,
  description: 255,
  metadata: 4096,
};

/** Abstract steps one evaluation may take in the worst case (Kubernetes' per-call limit). */
export const SELECTOR_COST_BUDGET = 1_000_000;

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
/** String functions whose result is a bool or an int. */
const SCALAR_RESULT = new Set(['contains', 'startsWith', 'endsWith', 'indexOf', 'lastIndexOf', 'size']);
/** Searches that compare the argument at every position of the receiver (naive search: n × m). */
const SEARCHES = new Set(['contains', 'indexOf', 'lastIndexOf']);

interface Est {
  /** Steps, worst case. */
  cost: number;
  /** Characters of a string, elements of a list, entries of a map; 1 for scalars. */
  len: number;
  /** The largest element of a list or map (its `len`). */
  elem: number;
  /** All elements' `len` together (a split string's pieces add up to the string). */
  total?: number;
}

export interface CostEstimate {
  cost: number;
  /** The smallest subexpression that alone exceeds the budget (or the whole expression). */
  costly: ASTNode | undefined;
  /** Names the costly part: `map` over up to 4097 elements, string concatenation, … */
  costlyPart: string | undefined;
}

const scalar = (cost: number): Est => ({ cost, len: 1, elem: 1 });

function describe(node: ASTNode, est: Est, receiverLen?: number): string {
  if (node.op === 'rcall' && COMPREHENSIONS.has(node.args[0])) {
    return `\`${node.args[0]}\` over up to ${fmt(receiverLen ?? est.len)} elements`;
  }
  if (node.op === 'rcall' && node.args[0] === 'bind') return '`cel.bind`';
  if (node.op === 'rcall' || node.op === 'call') return `\`${node.args[0]}\``;
  if (node.op === '+') return `\`+\` building up to ${fmt(est.len)} characters or elements`;
  return `\`${node.op}\``;
}

function fmt(n: number): string {
  return Number.isFinite(n) && n < 1e15 ? String(Math.round(n)) : n.toExponential(1);
}

/** Estimates `root`; scope maps bound names (comprehension variables, `cel.bind`) to their size. */
export function estimateSelectorCost(root: ASTNode, budget = SELECTOR_COST_BUDGET): CostEstimate {
  const over: { node: ASTNode; est: Est; receiverLen?: number }[] = [];
  const note = (node: ASTNode, est: Est, receiverLen?: number): Est => {
    if (est.cost > budget) over.push({ node, est, ...(receiverLen !== undefined ? { receiverLen } : {}) });
    return est;
  };

  const walk = (node: ASTNode, scope: ReadonlyMap<string, Est>): Est => {
    switch (node.op) {
      case 'value': {
        const v: unknown = node.args;
        return { cost: 1, len: typeof v === 'string' ? v.length : 1, elem: 1 };
      }
      case 'id':
        return scope.get(node.args) ?? { cost: 1, len: 0, elem: 0 };
      case '.':
      case '.?': {
        const [recv, field] = node.args;
        const r = walk(recv, scope);
        const max =
          recv.op === 'id' && recv.args === 'endpoint' && !scope.has('endpoint')
            ? (ENDPOINT_FIELD_MAX[field] ?? r.elem)
            : r.elem;
        return note(node, { cost: r.cost + 1, len: max, elem: max });
      }
      case 'list': {
        const items = node.args.map((c) => walk(c, scope));
        return note(node, {
          cost: 1 + items.reduce((n, e) => n + e.cost, 0),
          len: items.length,
          elem: Math.max(1, ...items.map((e) => e.len)),
        });
      }
      case 'map': {
        const items = node.args.flat().map((c) => walk(c, scope));
        return note(node, {
          cost: 1 + items.reduce((n, e) => n + e.cost, 0),
          len: node.args.length,
          elem: Math.max(1, ...items.map((e) => e.len)),
        });
      }
      case 'rcall': {
        const [fn, recvNode, argNodes] = node.args;
        if (fn === 'bind' && recvNode.op === 'id' && recvNode.args === 'cel' && argNodes.length === 3) {
          const [name, init, body] = argNodes as [ASTNode, ASTNode, ASTNode];
          const i = walk(init, scope);
          const inner = new Map(scope);
          if (name.op === 'id') inner.set(name.args, { cost: 1, len: i.len, elem: i.elem });
          const b = walk(body, inner);
          return note(node, { cost: i.cost + b.cost + 1, len: b.len, elem: b.elem });
        }
        const r = walk(recvNode, scope);
        if (COMPREHENSIONS.has(fn) && argNodes.length >= 2) {
          const [name, ...bodies] = argNodes as [ASTNode, ...ASTNode[]];
          const inner = new Map(scope);
          // Work linear in the element adds up over all turns to the elements' total, so the
          // variable counts at the average element size when the total is known.
          const each =
            r.total !== undefined && r.len > 0 ? Math.min(r.elem, Math.ceil(r.total / r.len)) : r.elem;
          if (name.op === 'id') inner.set(name.args, { cost: 1, len: each, elem: each });
          const b = bodies.map((x) => walk(x, inner));
          const perTurn = 1 + b.reduce((n, e) => n + e.cost, 0);
          const last = b[b.length - 1]!;
          const len = fn === 'map' || fn === 'filter' ? r.len : 1;
          const elem = fn === 'map' ? last.len : fn === 'filter' ? r.elem : 1;
          return note(node, { cost: r.cost + r.len * perTurn, len, elem }, r.len);
        }
        const args = argNodes.map((a) => walk(a, scope));
        const argCost = args.reduce((n, e) => n + e.cost, 0);
        const argLen = args.reduce((n, e) => n + e.len, 0);
        // cel-js counts a string's code points: size() walks its receiver.
        if (fn === 'size') return note(node, scalar(r.cost + argCost + r.len + 1));
        if (SEARCHES.has(fn))
          return note(node, scalar(r.cost + argCost + r.len * Math.max(1, argLen) + argLen));
        if (SCALAR_RESULT.has(fn)) return note(node, scalar(r.cost + argCost + r.len + argLen));
        if (fn === 'split') {
          return note(node, {
            cost: r.cost + argCost + r.len + argLen,
            len: r.len + 1,
            elem: r.len,
            total: r.len,
          });
        }
        if (fn === 'join') {
          const len = r.len * r.elem + Math.max(0, r.len - 1) * argLen;
          return note(node, { cost: r.cost + argCost + len, len, elem: 1 });
        }
        // Encodings grow their receiver: the next function walks the grown value.
        if (fn === 'hex') return note(node, { cost: r.cost + 2 * r.len + 1, len: 2 * r.len, elem: 1 });
        if (fn === 'base64') {
          const len = 4 * Math.ceil(r.len / 3);
          return note(node, { cost: r.cost + len + 1, len, elem: 1 });
        }
        if (fn === 'replace') {
          const len = r.len * Math.max(1, args[1]?.len ?? 1);
          return note(node, { cost: r.cost + argCost + len, len, elem: 1 });
        }
        // Any other function of a receiver: linear in everything it gets, as large as it all.
        const len = r.len + argLen;
        return note(node, {
          cost: r.cost + argCost + len,
          len,
          elem: Math.max(r.elem, ...args.map((a) => a.elem)),
        });
      }
      case 'call': {
        const args = node.args[1].map((a) => walk(a, scope));
        const sum = args.reduce((n, e) => n + e.len, 0);
        // `bytes(string)` encodes UTF-8: up to 3 bytes per character (UTF-16 unit) it is given.
        const len = node.args[0] === 'bytes' ? 3 * sum : sum;
        return note(node, {
          cost: 1 + args.reduce((n, e) => n + e.cost, 0) + len,
          len: Math.max(1, len),
          elem: Math.max(1, ...args.map((a) => a.elem)),
        });
      }
      case '+': {
        const [a, b] = node.args.map((c) => walk(c, scope)) as [Est, Est];
        const len = a.len + b.len;
        return note(node, { cost: a.cost + b.cost + len, len, elem: Math.max(a.elem, b.elem) });
      }
      case 'in': {
        const [a, b] = node.args.map((c) => walk(c, scope)) as [Est, Est];
        return note(node, scalar(a.cost + b.cost + b.len * Math.max(1, a.len)));
      }
      case '?:': {
        const [c, t, f] = node.args.map((x) => walk(x, scope)) as [Est, Est, Est];
        return note(node, {
          cost: c.cost + Math.max(t.cost, f.cost),
          len: Math.max(t.len, f.len),
          elem: Math.max(t.elem, f.elem),
        });
      }
      case '!_':
      case '-_': {
        const a = walk(node.args, scope);
        return note(node, scalar(a.cost + 1));
      }
      default: {
        // Comparisons, arithmetic, logic, indexing: both sides, plus comparing their contents.
        const parts = (node.args as ASTNode[]).map((x) => walk(x, scope));
        const cmp = Math.max(1, ...parts.map((p) => p.len));
        const indexed = node.op === '[]' || node.op === '[?]';
        const elem = parts[0]?.elem ?? 1;
        return note(node, {
          cost: 1 + parts.reduce((n, e) => n + e.cost, 0) + (indexed ? 1 : cmp),
          len: indexed ? elem : 1,
          elem: indexed ? elem : 1,
        });
      }
    }
  };

  const total = walk(root, new Map());
  if (total.cost <= budget) return { cost: total.cost, costly: undefined, costlyPart: undefined };
  const smallest = over.sort((a, b) => a.est.cost - b.est.cost)[0];
  if (!smallest) return { cost: total.cost, costly: root, costlyPart: describe(root, total) };
  return {
    cost: total.cost,
    costly: smallest.node,
    costlyPart: describe(smallest.node, smallest.est, smallest.receiverLen),
  };
}
