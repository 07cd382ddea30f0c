import { CST, Lexer } from 'yaml';

/**
 * How deeply a YAML (or JSON) document nests, measured before any parser builds a tree: the
 * `yaml` parser's cost grows far faster than the input with nesting (a megabyte of `[` takes
 * seconds and a gigabyte; sixty thousand `{` abort the process), so nesting is measured with
 * yaml's own lexer, which is linear and knows quoting and block scalars exactly as the parser
 * will. Used by the config loader (`src/cli/config-text.ts`) and by the mock's document limits.
 */

const LAYOUT = new Set(['space', 'newline', 'comment', 'byte-order-mark']);

/** Lexer tokens that mark a position without consuming source text. */
function isZeroWidth(token: string): boolean {
  return token.length === 1 && token.charCodeAt(0) < 0x20 && token !== '\n' && token !== '\t';
}

/**
 * An upper estimate of a YAML (or JSON) document's nesting depth, stopping as soon as it passes
 * `limit`. Flow brackets count one level each; in block context every token that starts further
 * right than the open ones counts one more (indentation levels, compact `- - x` items and
 * `key: value` pairs alike). Every nested block collection starts further right than its parent
 * (or is a `-` sequence at its key's column), so the estimate is not below the real depth, and
 * at most a small multiple of it (a `key: value` line counts up to three).
 */
export function documentNesting(text: string, limit: number): number {
  const block: BlockEntry[] = [];
  let flow = 0;
  let column = 0;
  let max = 0;
  for (const token of new Lexer().lex(text)) {
    if (isZeroWidth(token)) continue;
    const type = CST.tokenType(token);
    if (type === 'flow-seq-start' || type === 'flow-map-start') {
      if (flow === 0) push(block, column, false);
      flow++;
    } else if (type === 'flow-seq-end' || type === 'flow-map-end') {
      flow = Math.max(0, flow - 1);
    } else if (flow === 0 && !LAYOUT.has(type ?? '') && type !== 'doc-start' && type !== 'doc-end') {
      push(block, column, type === 'seq-item-ind');
    }
    max = Math.max(max, block.length + flow);
    if (max > limit) return max;
    const newline = token.lastIndexOf('\n');
    column = newline === -1 ? column + token.length : token.length - newline - 1;
  }
  return max;
}

interface BlockEntry {
  column: number;
  /** Pushed by a `-` item indicator. */
  seq: boolean;
}

/**
 * Closes the entries a token at `column` ends, then opens its own. A `-` at the very column of
 * a mapping key is that key's value (YAML lets a sequence sit at its parent key's indentation),
 * so it stays nested; sibling `-` items and keys at one column replace each other.
 */
function push(stack: BlockEntry[], column: number, seq: boolean): void {
  for (let top = stack.at(-1); top; top = stack.at(-1)) {
    if (top.column < column || (top.column === column && seq && !top.seq)) break;
    stack.pop();
  }
  stack.push({ column, seq });
}
