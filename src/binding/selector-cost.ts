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

type Scope = ReadonlyMap<string, Est>;
type NodeOf<Op extends ASTNode['op']> = Extract<ASTNode, { op: Op }>;

/** One estimate's walk: each node kind's estimator calls it for the node's children. */
interface Walk {
  (node: ASTNode, scope: Scope): Est;
  /** Records `est` of `node` when it alone is over the budget; returns it. */
  note(node: ASTNode, est: Est, receiverLen?: number): Est;
}

/** Estimates `root`; scope maps bound names (comprehension variables, `cel.bind`) to their size. */
export function estimateSelectorCost(root: ASTNode, budget = SELECTOR_COST_BUDGET): CostEstimate {
  const over: { node: ASTNode; est: Est; receiverLen?: number }[] = [];
  const walk: Walk = Object.assign((node: ASTNode, scope: Scope) => estimateNode(walk, node, scope), {
    note: (node: ASTNode, est: Est, receiverLen?: number): Est => {
      if (est.cost > budget) over.push({ node, est, ...(receiverLen !== undefined ? { receiverLen } : {}) });
      return est;
    },
  });
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

/** Each node kind to its estimator. */
function estimateNode(walk: Walk, node: ASTNode, scope: Scope): Est {
  switch (node.op) {
    case 'value': {
      const v: unknown = node.args;
      return { cost: 1, len: typeof v === 'string' ? v.length : 1, elem: 1 };
    }
    case 'id':
      return scope.get(node.args) ?? { cost: 1, len: 0, elem: 0 };
    case '.':
    case '.?':
      return walk.note(node, fieldEst(walk, node, scope));
    case 'list':
      return walk.note(
        node,
        collectionEst(
          node.args.map((c) => walk(c, scope)),
          node.args.length,
        ),
      );
    case 'map':
      return walk.note(
        node,
        collectionEst(
          node.args.flat().map((c) => walk(c, scope)),
          node.args.length,
        ),
      );
    case 'rcall':
      return receiverCallEst(walk, node, scope);
    case 'call':
      return walk.note(node, functionCallEst(walk, node, scope));
    case '+': {
      const [a, b] = node.args.map((c) => walk(c, scope)) as [Est, Est];
      const len = a.len + b.len;
      return walk.note(node, { cost: a.cost + b.cost + len, len, elem: Math.max(a.elem, b.elem) });
    }
    case 'in': {
      const [a, b] = node.args.map((c) => walk(c, scope)) as [Est, Est];
      return walk.note(node, scalar(a.cost + b.cost + b.len * Math.max(1, a.len)));
    }
    case '?:': {
      const [c, t, f] = node.args.map((x) => walk(x, scope)) as [Est, Est, Est];
      return walk.note(node, {
        cost: c.cost + Math.max(t.cost, f.cost),
        len: Math.max(t.len, f.len),
        elem: Math.max(t.elem, f.elem),
      });
    }
    case '!_':
    case '-_':
      return walk.note(node, scalar(walk(node.args, scope).cost + 1));
    default:
      return walk.note(node, operatorEst(walk, node, scope));
  }
}

/** `x.field`: an `endpoint` field is as large as the API allows; any other, as its receiver's elements. */
function fieldEst(walk: Walk, node: NodeOf<'.' | '.?'>, scope: Scope): Est {
  const [recv, field] = node.args;
  const r = walk(recv, scope);
  const max =
    recv.op === 'id' && recv.args === 'endpoint' && !scope.has('endpoint')
      ? (ENDPOINT_FIELD_MAX[field] ?? r.elem)
      : r.elem;
  return { cost: r.cost + 1, len: max, elem: max };
}

/** A list or map literal: its items' costs, `len` entries, its largest item. */
function collectionEst(items: readonly Est[], len: number): Est {
  return {
    cost: 1 + items.reduce((n, e) => n + e.cost, 0),
    len,
    elem: Math.max(1, ...items.map((e) => e.len)),
  };
}

/** `f(args)`: linear in what it gets; `bytes(string)` encodes UTF-8, up to 3 bytes per UTF-16 unit. */
function functionCallEst(walk: Walk, node: NodeOf<'call'>, scope: Scope): Est {
  const args = node.args[1].map((a) => walk(a, scope));
  const sum = args.reduce((n, e) => n + e.len, 0);
  const len = node.args[0] === 'bytes' ? 3 * sum : sum;
  return {
    cost: 1 + args.reduce((n, e) => n + e.cost, 0) + len,
    len: Math.max(1, len),
    elem: Math.max(1, ...args.map((a) => a.elem)),
  };
}

/** Comparisons, arithmetic, logic, indexing: both sides, plus comparing their contents. */
function operatorEst(walk: Walk, node: ASTNode, scope: Scope): Est {
  const parts = (node.args as ASTNode[]).map((x) => walk(x, scope));
  const cmp = Math.max(1, ...parts.map((p) => p.len));
  const indexed = node.op === '[]' || node.op === '[?]';
  const elem = parts[0]?.elem ?? 1;
  return {
    cost: 1 + parts.reduce((n, e) => n + e.cost, 0) + (indexed ? 1 : cmp),
    len: indexed ? elem : 1,
    elem: indexed ? elem : 1,
  };
}

/** `recv.f(args)`: `cel.bind`, a comprehension, or a function of the receiver. */
function receiverCallEst(walk: Walk, node: NodeOf<'rcall'>, scope: Scope): Est {
  const [fn, recvNode, argNodes] = node.args;
  if (fn === 'bind' && recvNode.op === 'id' && recvNode.args === 'cel' && argNodes.length === 3)
    return walk.note(node, bindEst(walk, argNodes as [ASTNode, ASTNode, ASTNode], scope));
  const r = walk(recvNode, scope);
  if (COMPREHENSIONS.has(fn) && argNodes.length >= 2)
    return walk.note(node, comprehensionEst(walk, fn, r, argNodes as [ASTNode, ...ASTNode[]], scope), r.len);
  const args = argNodes.map((a) => walk(a, scope));
  const call: ReceiverCall = {
    r,
    args,
    argCost: args.reduce((n, e) => n + e.cost, 0),
    argLen: args.reduce((n, e) => n + e.len, 0),
  };
  return walk.note(node, (RECEIVER_FUNCTIONS.get(fn) ?? anyReceiverFunction)(call));
}

/** `cel.bind(name, init, body)`: the body sees `name` as large as `init`. */
function bindEst(walk: Walk, [name, init, body]: [ASTNode, ASTNode, ASTNode], scope: Scope): Est {
  const i = walk(init, scope);
  const inner = new Map(scope);
  if (name.op === 'id') inner.set(name.args, { cost: 1, len: i.len, elem: i.elem });
  const b = walk(body, inner);
  return { cost: i.cost + b.cost + 1, len: b.len, elem: b.elem };
}

/** A comprehension multiplies its body by the length of what it iterates. */
function comprehensionEst(
  walk: Walk,
  fn: string,
  r: Est,
  [name, ...bodies]: [ASTNode, ...ASTNode[]],
  scope: Scope,
): Est {
  const inner = new Map(scope);
  // Work linear in the element adds up over all turns to the elements' total, so the
  // variable counts at the average element size when the total is known.
  const each = r.total !== undefined && r.len > 0 ? Math.min(r.elem, Math.ceil(r.total / r.len)) : r.elem;
  if (name.op === 'id') inner.set(name.args, { cost: 1, len: each, elem: each });
  const b = bodies.map((x) => walk(x, inner));
  const perTurn = 1 + b.reduce((n, e) => n + e.cost, 0);
  const last = b[b.length - 1]!;
  const len = fn === 'map' || fn === 'filter' ? r.len : 1;
  const elem = fn === 'map' ? last.len : fn === 'filter' ? r.elem : 1;
  return { cost: r.cost + r.len * perTurn, len, elem };
}

/** A function of a receiver, sized: the receiver, the arguments, their costs and lengths together. */
interface ReceiverCall {
  r: Est;
  args: readonly Est[];
  argCost: number;
  argLen: number;
}

/** cel-js counts a string's code points: size() walks its receiver. */
const sizeFn = ({ r, argCost }: ReceiverCall): Est => scalar(r.cost + argCost + r.len + 1);
/** Searches compare the argument at every position of the receiver (naive search: n × m). */
const searchFn = ({ r, argCost, argLen }: ReceiverCall): Est =>
  scalar(r.cost + argCost + r.len * Math.max(1, argLen) + argLen);
/** A string function whose result is a bool or an int, linear in what it reads. */
const scalarResultFn = ({ r, argCost, argLen }: ReceiverCall): Est =>
  scalar(r.cost + argCost + r.len + argLen);
const splitFn = ({ r, argCost, argLen }: ReceiverCall): Est => ({
  cost: r.cost + argCost + r.len + argLen,
  len: r.len + 1,
  elem: r.len,
  total: r.len,
});
const joinFn = ({ r, argCost, argLen }: ReceiverCall): Est => {
  const len = r.len * r.elem + Math.max(0, r.len - 1) * argLen;
  return { cost: r.cost + argCost + len, len, elem: 1 };
};
// Encodings grow their receiver: the next function walks the grown value.
const hexFn = ({ r }: ReceiverCall): Est => ({ cost: r.cost + 2 * r.len + 1, len: 2 * r.len, elem: 1 });
const base64Fn = ({ r }: ReceiverCall): Est => {
  const len = 4 * Math.ceil(r.len / 3);
  return { cost: r.cost + len + 1, len, elem: 1 };
};
const replaceFn = ({ r, args, argCost }: ReceiverCall): Est => {
  const len = r.len * Math.max(1, args[1]?.len ?? 1);
  return { cost: r.cost + argCost + len, len, elem: 1 };
};
/** Any other function of a receiver: linear in everything it gets, as large as it all. */
const anyReceiverFunction = ({ r, args, argCost, argLen }: ReceiverCall): Est => {
  const len = r.len + argLen;
  return { cost: r.cost + argCost + len, len, elem: Math.max(r.elem, ...args.map((a) => a.elem)) };
};

const RECEIVER_FUNCTIONS: ReadonlyMap<string, (call: ReceiverCall) => Est> = new Map([
  ['size', sizeFn],
  ['contains', searchFn],
  ['indexOf', searchFn],
  ['lastIndexOf', searchFn],
  ['startsWith', scalarResultFn],
  ['endsWith', scalarResultFn],
  ['split', splitFn],
  ['join', joinFn],
  ['hex', hexFn],
  ['base64', base64Fn],
  ['replace', replaceFn],
]);
