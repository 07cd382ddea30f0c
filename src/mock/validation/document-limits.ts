import { documentNesting } from '../../config/document-nesting.js';

/**
 * Bounds on user-supplied JSON/YAML documents (traffic policies), checked before any parser
 * builds a tree (see `src/config/document-nesting.ts` for why nesting is measured first).
 */
export const MAX_DOCUMENT_BYTES = 64 * 1024;
export const MAX_DOCUMENT_NESTING = 64;

export type DocumentLimitViolation = { rule: 'size'; bytes: number } | { rule: 'nesting'; depth: number };

/** Why a document may not be parsed at all, or undefined when it is within both limits. */
export function documentLimitViolation(text: string): DocumentLimitViolation | undefined {
  // Length in UTF-16 units bounds the UTF-8 byte length from below by a factor of 3: skip the
  // exact count for strings that cannot be over, and never encode a huge one to find out.
  if (text.length > MAX_DOCUMENT_BYTES) return { rule: 'size', bytes: Buffer.byteLength(text) };
  if (text.length * 3 > MAX_DOCUMENT_BYTES) {
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_DOCUMENT_BYTES) return { rule: 'size', bytes };
  }
  const depth = documentNesting(text, MAX_DOCUMENT_NESTING);
  return depth > MAX_DOCUMENT_NESTING ? { rule: 'nesting', depth } : undefined;
}
