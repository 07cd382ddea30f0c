/**
 * Follows a file that Kubernetes mounts from a Secret or ConfigMap. The kubelet replaces the
 * content by swapping the `..data` symlink of the volume's directory, so the file's own inode never
 * changes and a watch on the file alone misses it: the directory is watched (any event there means
 * "read again") and, because inotify is not available everywhere (and misses some overlay
 * filesystems), the file is also re-read on a timer. The callback runs only when the content
 * differs from the last one seen.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface FileWatch {
  stop(): void;
}

export interface FileWatchOptions {
  /** Re-read on a timer this often; 10 s. */
  pollMs?: number;
  /** Content read at startup (the callback fires for changes from it). */
  initial: string;
  onChange(content: string): void;
  onError(error: string): void;
}

export function watchFile(path: string, opts: FileWatchOptions): FileWatch {
  let last = opts.initial;
  let reading = false;
  let again = false;
  let stopped = false;
  let lastError: string | undefined;

  const check = async (): Promise<void> => {
    if (stopped) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      const content = await readFile(path, 'utf8');
      lastError = undefined;
      if (!stopped && content !== last) {
        last = content;
        opts.onChange(content);
      }
    } catch (err) {
      const msg = `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
      // A missing file during the symlink swap is normal for a moment; report each new error once.
      if (msg !== lastError && !stopped) opts.onError(msg);
      lastError = msg;
    } finally {
      reading = false;
      if (again && !stopped) {
        again = false;
        void check();
      }
    }
  };

  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, () => void check());
    watcher.on('error', () => {
      watcher?.close();
      watcher = undefined;
    });
  } catch {
    watcher = undefined; // the timer alone then
  }
  const timer = setInterval(() => void check(), opts.pollMs ?? 10_000);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      watcher?.close();
    },
  };
}
