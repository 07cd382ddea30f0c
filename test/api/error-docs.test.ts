import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../src/api/error-codes/index.js';
import { renderErrorCatalogueMarkdown } from '../../src/api/error-codes/markdown.js';

describe('error catalogue', () => {
  it('is documented in docs/errors.md exactly as the code defines it (run `npm run docs:errors`)', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    expect(doc).toBe(renderErrorCatalogueMarkdown());
  });

  it('uses ERR_<n> codes and real HTTP error statuses', () => {
    for (const [code, info] of Object.entries(errorCatalogue)) {
      expect(code).toMatch(/^ERR_\d{3}$/);
      expect(info.status).toBeGreaterThanOrEqual(400);
      expect(info.status).toBeLessThan(600);
      expect(info.title.length).toBeGreaterThan(5);
    }
  });
});
