/**
 * Something that happened, told to every part that subscribed. It is how a root closes a cycle
 * between its parts (a part built early reports to one built later, e.g. a credential check whose
 * change re-publishes a readiness built from it) without a forward reference: the notice is built
 * before both, the early part is given `tell`, the later part subscribes once it exists.
 */
export class Notice {
  private readonly listeners: (() => void)[] = [];

  subscribe(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Calls every subscriber, in the order they subscribed. */
  tell(): void {
    for (const listener of this.listeners) listener();
  }
}
