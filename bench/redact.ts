// `node bench/redact.ts`: what redaction costs a status write. A run redacts the status it
// writes (every string of it) with the process's Redactor; this measures that for a steady
// App's status (40 objects, conditions, inventory hashes) with the secrets of one run (a Git
// token and 3 rendered Secret values) and of a process that has seen 1,000 Apps' secrets, and
// for a failed run's message quoting a Git server's error. Prints
// CPU microseconds per status write (best of 3 rounds of 0.4 s or more). Pure CPU: no cluster needed.
import { Redactor } from "../src/core/index.ts";

const OBJECTS = 40;
/** Each case runs for at least this long (and at least 3 writes), best of ROUNDS. */
const ROUND_MS = 400;
const ROUNDS = 3;

/** A steady App's status as recordRun writes it (shape of src/app/schema.ts AppStatus). */
function steadyStatus(): Record<string, unknown> {
  const hex = (i: number, n: number) => (i * 2654435761).toString(16).padStart(8, "0").repeat(n);
  const refs = Array.from({ length: OBJECTS }, (_, i) => ({
    apiVersion: i % 3 === 0 ? "apps/v1" : "v1",
    kind: i % 3 === 0 ? "Deployment" : i % 3 === 1 ? "Service" : "ConfigMap",
    namespace: "team-a",
    name: `web-component-${i}`,
  }));
  return {
    observedGeneration: 7,
    revision: hex(1, 5),
    observedRevision: hex(1, 5),
    objectHash: `sha256:${hex(2, 8)}`,
    observedObjectHash: `sha256:${hex(2, 8)}`,
    syncStatus: "Synced",
    healthStatus: "Healthy",
    healthReason: "all 40 objects healthy",
    lastSyncedAt: "2026-01-01T00:00:00Z",
    nextReconcileAt: "2026-01-01T00:05:00Z",
    inventory: refs.map((r, i) => ({ ...r, hash: `sha256:${hex(i + 3, 8)}` })),
    resources: refs.map((r) => ({
      ...r,
      status: "Synced",
      health: "Healthy",
      message: r.kind === "Deployment" ? "3 of 3 replicas updated and available" : "",
    })),
    conditions: ["Ready", "Reconciling", "Stalled"].map((type) => ({
      type,
      status: type === "Ready" ? "True" : "False",
      reason: type === "Ready" ? "Synced" : "Reconciled",
      message: `revision ${hex(1, 5)} applied: ${OBJECTS} objects, Healthy`,
      lastTransitionTime: "2026-01-01T00:00:00Z",
      observedGeneration: 7,
    })),
    previousRevisions: Array.from({ length: 10 }, (_, i) => ({
      revision: hex(i + 9, 5),
      objectHash: `sha256:${hex(i + 20, 8)}`,
      appliedAt: "2026-01-01T00:00:00Z",
    })),
  };
}

/** A failed run's status: a Git server's error echoing the Basic credential it was sent. */
function failedStatus(token: string): Record<string, unknown> {
  const basic = Buffer.from(`deploy:${token}`).toString("base64");
  const echoed = `could not read from https://git.example/team/app.git: ERR access denied (you sent Basic ${basic.toLowerCase()}; hex ${Buffer.from(token).toString("hex")})`;
  return {
    ...steadyStatus(),
    syncStatus: "Unknown",
    conditions: [{ type: "Ready", status: "False", reason: "SourceFailed", message: echoed }],
  };
}

function runSecrets(i: number): { token: string; values: string[] } {
  return {
    token: `glpat-${i.toString(36).padStart(6, "0")}-Qz9/x+Kp7mW2v`,
    values: [`db-password-${i}-hunter2`, `api-key-${i}-0123456789abcdef`, `s3cr3t-${i}-value`],
  };
}

function redactorWith(apps: number): { redactor: Redactor; token: string } {
  const redactor = new Redactor();
  let token = "";
  for (let i = 0; i < apps; i++) {
    const s = runSecrets(i);
    redactor.addCredentials({ username: "deploy", token: s.token });
    for (const v of s.values) redactor.add(v);
    token = s.token;
  }
  return { redactor, token };
}

/** Best of ROUNDS: CPU microseconds per redactValue of `status`. */
function measure(redactor: Redactor, status: unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < ROUNDS; r++) {
    const cpu = process.cpuUsage();
    const t = performance.now();
    let writes = 0;
    while (writes < 3 || performance.now() - t < ROUND_MS) {
      redactor.redactValue(status);
      writes++;
    }
    const used = process.cpuUsage(cpu);
    best = Math.min(best, (used.user + used.system) / writes);
  }
  return best;
}

const rows: Array<[string, number]> = [];
const one = redactorWith(1);
const many = redactorWith(1_000);
const steady = steadyStatus();
rows.push(["no secrets (identity)", measure(new Redactor(), steady)]);
rows.push(["steady status, 1 App's secrets", measure(one.redactor, steady)]);
rows.push(["steady status, 1,000 Apps' secrets", measure(many.redactor, steady)]);
rows.push(["failed status, 1 App's secrets", measure(one.redactor, failedStatus(one.token))]);
rows.push(["failed status, 1,000 Apps' secrets", measure(many.redactor, failedStatus(many.token))]);

const size = JSON.stringify(steady).length;
console.log(`redaction of one status write (${size} bytes of JSON, ${OBJECTS} objects)`);
console.log(`${"case".padEnd(38)} ${"CPU µs/write".padStart(14)}`);
for (const [name, us] of rows) console.log(`${name.padEnd(38)} ${us.toFixed(1).padStart(14)}`);
