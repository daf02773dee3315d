import { writeFileSync } from "node:fs";
import { fixtureFiles, REAL_FIXTURES, startGitServer } from "/work/main/test/support/git-server.ts";

const s = await startGitServer();
const repo = await s.createRepo("podinfo", fixtureFiles(REAL_FIXTURES + "/podinfo-webapp"));
await repo.commit({ "kust/kustomization.yaml": "resources: []\n" });
const priv = await s.createRepo("priv", { "a.yaml": "a: 1\n" });
writeFileSync("/tmp/wk/url", repo.url);
setInterval(() => {}, 1000);
