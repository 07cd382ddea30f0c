/**
 * Incremental parser of a text/event-stream body, following the WHATWG "event stream
 * interpretation" rules. Pure: feed it chunks split anywhere (inside a UTF-8 sequence, between
 * CR and LF, inside a field name) and it yields the same messages as for the whole body at once.
 */

export interface SseMessage {
  /** `event` field, or `message` when the block had none. */
  event: string;
  /** `data` lines joined with "\n". */
  data: string;
  /** The last event id buffer at dispatch time ("" when no id was ever set). */
  id: string;
}

export interface SseParserHooks {
  /** A comment line (": text"), e.g. a server heartbeat; `text` is without the leading ":" and one space. */
  onComment?(text: string): void;
  /** A valid `retry:` field, in milliseconds. */
  onRetry?(ms: number): void;
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private skipLeadingLf = false;
  private started = false;
  private data: string[] = [];
  private hasData = false;
  private eventType = '';
  /** The stream's last event id buffer; survives across messages as the spec says. */
  lastEventId = '';

  constructor(private readonly hooks: SseParserHooks = {}) {}

  /** Feeds one chunk; returns the messages completed by it, in order. */
  push(chunk: Uint8Array | string): SseMessage[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    return this.consume(text, false);
  }

  /**
   * Ends the stream. A final block without its terminating blank line is discarded, as the
   * spec requires (a half-received event must not be acted on).
   */
  end(): SseMessage[] {
    const out = this.consume(this.decoder.decode(), true);
    this.buffer = '';
    this.resetBlock();
    return out;
  }

  private consume(text: string, final: boolean): SseMessage[] {
    let input = text;
    if (!this.started && input.length > 0) {
      this.started = true;
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
    }
    if (this.skipLeadingLf && input.length > 0) {
      this.skipLeadingLf = false;
      if (input[0] === '\n') input = input.slice(1);
    }
    this.buffer += input;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== '\n' && c !== '\r') continue;
      const line = this.buffer.slice(start, i);
      if (c === '\r') {
        if (i + 1 < this.buffer.length) {
          if (this.buffer[i + 1] === '\n') i++;
        } else {
          this.skipLeadingLf = true; // the LF of a CRLF may arrive in the next chunk
        }
      }
      start = i + 1;
      const msg = this.line(line);
      if (msg) out.push(msg);
    }
    this.buffer = this.buffer.slice(start);
    if (final) this.skipLeadingLf = false;
    return out;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) {
      this.hooks.onComment?.(line.slice(1).replace(/^ /, ''));
      return undefined;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.hooks.onRetry?.(Number(value));
        break;
      default:
        break; // unknown fields are ignored
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    if (!this.hasData) {
      this.resetBlock();
      return undefined;
    }
    const msg: SseMessage = {
      event: this.eventType || 'message',
      data: this.data.join('\n'),
      id: this.lastEventId,
    };
    this.resetBlock();
    return msg;
  }

  private resetBlock(): void {
    this.data = [];
    this.hasData = false;
    this.eventType = '';
  }
}
