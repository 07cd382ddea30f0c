/** An account's records of one resource kind, kept in id order (ids sort by creation time). */
export class Collection<T extends { id: string }> {
  private readonly items = new Map<string, T>();

  get size(): number {
    return this.items.size;
  }

  get(id: string): T | undefined {
    return this.items.get(id);
  }

  has(id: string): boolean {
    return this.items.has(id);
  }

  /** Inserts or replaces a record. */
  put(item: T): T {
    this.items.set(item.id, item);
    return item;
  }

  delete(id: string): T | undefined {
    const item = this.items.get(id);
    this.items.delete(id);
    return item;
  }

  /** All records, newest first. */
  newestFirst(): T[] {
    return [...this.items.values()].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }
}
