// A GitHub Actions run (octo-org/hello-world run 4242) whose state moves as an agent's CI loop
// goes: failed, re-run (failed jobs), in progress, completed. Its answers carry ETags and a request
// that holds the current one is answered 304, so a test or a bench counts what the server sent.

/** The repository of the run. */
export const CI_LOOP_REPO = { owner: "octo-org", repo: "hello-world" };

/** The path of the repository's Actions API. */
export const CI_LOOP_BASE = "/repos/octo-org/hello-world/actions";

/**
 * Adds the run's routes to `upstream`: GET the run, GET its jobs, POST rerun-failed-jobs. Returns
 * its state, which the caller may set: `pollsAfterRerun` (polls answered in progress after a
 * re-run, 3 unless set) or `msAfterRerun` (time after the re-run until it completes, instead);
 * `polls` and `notModified` count what was asked.
 */
export function ciLoopRun(upstream) {
  const run = { attempt: 1, completed: true, conclusion: "failure", pollsLeft: 0, completesAt: null, polls: 0, notModified: 0,
    pollsAfterRerun: 3, msAfterRerun: null };
  const tagged = (req, res, json, body, etag) => {
    if (req.headers["if-none-match"] === etag) {
      run.notModified++;
      res.writeHead(304, { ETag: etag, "X-RateLimit-Remaining": "4999" });
      return res.end();
    }
    json(res, 200, body, { ETag: etag, "X-RateLimit-Remaining": "4998" });
  };
  run.body = () => {
    const status = run.completed ? "completed" : "in_progress";
    const body = {
      id: 4242, name: "CI", run_attempt: run.attempt, workflow_id: 1001, status,
      conclusion: run.completed ? run.conclusion : null, event: "push", head_branch: "main",
      head_sha: "0123abc", html_url: "https://github.com/octo-org/hello-world/actions/runs/4242",
      created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:05:00Z",
    };
    return { body, etag: `W/"run-${run.attempt}-${status}"` };
  };
  run.tagged = tagged;
  upstream.route("GET", new RegExp(`^${CI_LOOP_BASE}/runs/4242$`), (req, res, _m, { json }) => {
    run.polls++;
    const due = run.completesAt === null ? run.pollsLeft-- <= 0 : Date.now() >= run.completesAt;
    if (!run.completed && due) run.completed = true;
    const { body, etag } = run.body();
    tagged(req, res, json, body, etag);
  });
  upstream.route("GET", new RegExp(`^${CI_LOOP_BASE}/runs/4242/jobs$`), (req, res, _m, { json }) => {
    const failed = run.conclusion === "failure";
    const jobs = [
      { id: 71, name: "build", status: "completed", conclusion: "success", steps: [{ name: "Build", conclusion: "success" }] },
      { id: 72, name: "test", status: "completed", conclusion: failed ? "failure" : "success",
        steps: [{ name: "Set up job", conclusion: "success" }, { name: "Run tests", conclusion: failed ? "failure" : "success" }] },
    ];
    tagged(req, res, json, { total_count: 2, jobs }, `W/"jobs-${run.attempt}-${failed}"`);
  });
  upstream.route("POST", new RegExp(`^${CI_LOOP_BASE}/runs/4242/rerun-failed-jobs$`), (_req, res, _m, { json }) => {
    // The re-run's own read-back is the first of the new attempt's in_progress answers.
    Object.assign(run, { attempt: run.attempt + 1, completed: false, conclusion: "success", pollsLeft: run.pollsAfterRerun,
      completesAt: run.msAfterRerun === null ? null : Date.now() + run.msAfterRerun });
    json(res, 201, {});
  });
  return run;
}
