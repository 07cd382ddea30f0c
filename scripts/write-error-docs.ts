import { writeFileSync } from 'node:fs';
import { renderErrorCatalogueMarkdown } from '../src/api/error-codes/markdown.js';

writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorCatalogueMarkdown());
