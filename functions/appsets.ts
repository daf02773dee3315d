// The runtimes' AppSet triggers (plumb serve, the Worker): a webhook's AppSets reconciled, then
// the Apps they changed run at once.
import { AppSetSpec } from "../src/app/appset.ts";
import { type AppSetWebhook, appSetsForWebhook } from "../src/http/appsets.ts";
import {
  type AppSetPorts,
  type AppSetResult,
  appsToRun,
  reconcileAppSets,
} from "../src/reconcile/appset.ts";

/**
 * The HttpDeps.appSets of a runtime: lists the AppSets, keeps those the webhook concerns
 * (appSetsForWebhook; an AppSet whose spec does not parse is left to the schedule, which
 * reports it), reconciles them (`print` gets each result line) and hands the Apps they
 * created, updated or deleted to `run`.
 */
export function appSetWebhooks(
  ports: () => AppSetPorts,
  run: (apps: Array<{ namespace: string; name: string }>) => Promise<void> | void,
  print: (r: AppSetResult) => void,
): (event: AppSetWebhook) => Promise<void> {
  return async (event) => {
    const results = await reconcileAppSets(ports(), new Date(), {
      only: (sets) => {
        const parsed = sets.flatMap((obj) => {
          const spec = AppSetSpec.safeParse(obj.spec ?? {});
          if (!spec.success) return [];
          const { namespace, name } = obj.metadata;
          return [{ namespace, name, spec: spec.data, obj }];
        });
        return appSetsForWebhook(parsed, event).map((s) => s.obj);
      },
      onResult: print,
    });
    const apps = appsToRun(results);
    if (apps.length > 0) await run(apps);
  };
}
