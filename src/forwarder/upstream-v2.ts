/**
 * v2: a forwarded connection as one HTTP/2 CONNECT stream (docs/ingress.md "v2"). END_STREAM is a
 * clean end, RST_STREAM an abort: an abort of ours goes out as CONNECT_ERROR (RFC 9113 §8.5: how
 * a proxy passes on a TCP reset), and any reset from the ingress is passed on as one.
 */
import { constants, type ClientHttp2Stream } from 'node:http2';
import type { EarlyStream } from '../api/ingress/v2-dialer.js';
import type { Upstream } from './upstream.js';

export function streamUpstream({ stream, response }: EarlyStream): Upstream {
  let bytes = 0;
  stream.on('error', () => undefined);
  return {
    protocol: 'v2',
    duplex: stream,
    confirmed: response,
    early: true,
    get gone() {
      return stream.destroyed || stream.closed;
    },
    bytesMoved: () => bytes + stream.bufferSize,
    watch(events) {
      let ended = false;
      let aborted = false;
      const abort = (reason: string) => {
        if (aborted) return;
        aborted = true;
        events.aborted(reason);
      };
      stream.on('data', (c: Buffer) => (bytes += c.length));
      stream.on('error', (err: NodeJS.ErrnoException) => abort(err.code ?? err.message));
      stream.once('aborted', () => abort('the ingress reset the stream'));
      // A reset also ends the readable side; it is known (rstCode) by the time the close was
      // processed, so decide one turn later.
      stream.once('end', () =>
        setImmediate(() => {
          if (wasReset(stream)) abort(`the ingress reset the stream (code ${stream.rstCode})`);
          else {
            ended = true;
            events.cleanEnd();
          }
        }),
      );
      stream.once('close', () =>
        setImmediate(() => {
          if (wasReset(stream)) abort(`the ingress reset the stream (code ${stream.rstCode})`);
          else if (!ended && !stream.readableEnded) abort('closed without an end of stream');
          events.closed();
        }),
      );
    },
    end: () => {
      if (!stream.destroyed) stream.end();
    },
    abort: () => {
      if (!stream.closed && !stream.destroyed) stream.close(constants.NGHTTP2_CONNECT_ERROR);
      // A stream closed with bytes still unread (its reader gone) never emits 'close' by itself.
      stream.destroy();
    },
  };
}

function wasReset(stream: ClientHttp2Stream): boolean {
  return (stream.rstCode ?? constants.NGHTTP2_NO_ERROR) !== constants.NGHTTP2_NO_ERROR;
}
