/**
 * Duplicate keys in a JSON document, which JSON.parse silently resolves (last wins) but the
 * apiserver's strict decoder reports as `duplicate field "<key>"`. A small scanner over the raw
 * text: it only tracks object nesting and key names, so it accepts exactly what JSON.parse
 * accepted before it runs (callers parse first).
 */
export function findDuplicateKeys(text: string): string[] {
  const dupes: string[] = [];
  const stack: (Set<string> | null)[] = []; // null marks an array level
  let expectKey = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const raw = text.slice(i, j + 1);
      i = j + 1;
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const key = JSON.parse(raw) as string;
        if (top.has(key)) dupes.push(key);
        top.add(key);
        expectKey = false;
      }
      continue;
    }
    if (c === '{') {
      stack.push(new Set());
      expectKey = true;
    } else if (c === '[') {
      stack.push(null);
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      expectKey = stack[stack.length - 1] !== null && stack.length > 0;
    }
    i++;
  }
  return dupes;
}
