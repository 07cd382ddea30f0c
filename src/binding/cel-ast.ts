import type { ASTNode } from '@marcbachmann/cel-js';

/**
 * The children of a @marcbachmann/cel-js AST node, in source order: the one reading of the
 * library's node shapes, shared by the selector's refusal checks (./selector.ts) and kubesim's
 * admission CEL (kubesim/admission/cel.ts), so a library upgrade that changes a shape is fixed
 * once. Pure; the per-op layout is the library's (`call`: [name, args], `rcall`: [name, receiver,
 * args], `.`: [receiver, field], a unary op's single operand unwrapped).
 */
export function celChildren(node: ASTNode): ASTNode[] {
  switch (node.op) {
    case 'value':
    case 'id':
      return [];
    case '.':
    case '.?':
      return [node.args[0]];
    case 'call':
      return [...node.args[1]];
    case 'rcall':
      return [node.args[1], ...node.args[2]];
    case 'list':
      return [...node.args];
    case 'map':
      return node.args.flat();
    case '!_':
    case '-_':
      return [node.args];
    default:
      return [...node.args];
  }
}
