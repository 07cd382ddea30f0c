/* global process, setInterval, clearInterval, setTimeout */
// Started detached beside a control plane: when the test process that started it is gone (it
// crashed, or its worker was killed), this kills the control plane's process groups, so no etcd,
// kube-apiserver or controller-manager outlives a test run. Plain JavaScript: it must start fast
// and need nothing but node.
// Usage: node watchdog.mjs <parentPid> <pgid> [<pgid>...]
const [parent, ...groups] = process.argv.slice(2).map(Number);
/** @param {number} pid */
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** @param {NodeJS.Signals} signal */
const killAll = (signal) => {
  for (const g of groups) {
    try {
      process.kill(-g, signal);
    } catch {
      // already gone
    }
  }
};
const timer = setInterval(() => {
  if (alive(parent)) return;
  clearInterval(timer);
  killAll('SIGTERM');
  setTimeout(() => {
    killAll('SIGKILL');
    process.exit(0);
  }, 3000);
}, 500);
process.on('SIGTERM', () => process.exit(0));
