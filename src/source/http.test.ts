import { describe, expect, it } from "vitest";
import { SourceError } from "../core/index.ts";
import { displayUrl, remoteFor, scrub, stripUserinfo, toSourceError } from "./http.ts";

describe("displayUrl", () => {
  it("drops userinfo, replaces query and fragment, and trims trailing slashes", () => {
    expect(displayUrl("https://u:p@host/repo.git?access_token=SECRET")).toBe(
      "https://host/repo.git?…",
    );
    expect(displayUrl("https://host/repo.git#SECRET")).toBe("https://host/repo.git#…");
    expect(displayUrl("https://host/repo.git?a=SECRET#SECRET")).toBe("https://host/repo.git?…#…");
    expect(displayUrl("https://host/org/repo/")).toBe("https://host/org/repo");
    expect(displayUrl("https://host/org/repo?")).toBe("https://host/org/repo");
    expect(displayUrl("https://host/@scope/repo")).toBe("https://host/@scope/repo");
  });

  it("also works on strings that are not URLs (a password holding ? or #)", () => {
    expect(displayUrl("u:p?a#ss@host/r.git?t=SECRET")).toBe("host/r.git?…");
    expect(displayUrl("https://u:p?a#ss@host/r.git")).toBe("https://host/r.git");
  });
});

describe("stripUserinfo and scrub", () => {
  it("shows every URL in a text without userinfo, query or fragment", () => {
    expect(
      stripUserinfo(
        "read https://u:PASS@h/r.git?access_token=SECRET: failed (see http://x/y?z=SECRET.)",
      ),
    ).toBe("read https://h/r.git?…: failed (see http://x/y?….)");
  });

  it("replaces the secrets of a remote, query values included", () => {
    const remote = remoteFor("https://h/r.git?access_token=S3CRET&x=1", { token: "T0KEN" });
    expect(remote.url).toBe("https://h/r.git?access_token=S3CRET&x=1");
    expect(remote.display).toBe("https://h/r.git?…");
    expect(scrub("echo access_token=S3CRET and S3CRET and T0KEN", remote.secrets)).toBe(
      "echo access_token=*** and *** and ***",
    );
  });
});

describe("toSourceError", () => {
  it("names the remote by its display form only", () => {
    const remote = remoteFor("https://u:PASS@h/r.git?access_token=S3CRET", undefined);
    const http = toSourceError({ code: "HttpError", data: { statusCode: 404 } }, remote);
    expect(http).toBeInstanceOf(SourceError);
    expect(http.message).toBe("repository not found: https://h/r.git?… (HTTP 404)");
    const network = toSourceError(
      new TypeError("Failed to parse URL from https://h/r.git?access_token=S3CRET/info/refs"),
      remote,
    );
    expect(network.message).toBe(
      "could not read from https://h/r.git?…: Failed to parse URL from https://h/r.git?…",
    );
    expect(network.transient).toBe(true);
  });

  it("quotes a Git server's ERR packet, and nothing else a server answers instead of Git", () => {
    const remote = remoteFor("https://h/r.git", { username: "deploy", token: "tok-0123456789" });
    const refused = toSourceError(
      {
        code: "ParseError",
        data: { expected: "x", actual: "ERR access denied for tok-0123456789\n" },
        message: 'Expected "x" but received "ERR access denied for tok-0123456789\n".',
      },
      remote,
    );
    expect(refused.message).toBe("Git server https://h/r.git refused: ERR access denied for ***");
    const page = toSourceError(
      {
        code: "ParseError",
        data: { expected: "x", actual: "<html>Authorization: Basic ZGVwbG95OnRvaw==</html>" },
      },
      remote,
    );
    expect(page.message).toBe(
      "https://h/r.git answered something other than the Git protocol (not quoted)",
    );
    expect(page.transient).toBe(true);
  });
});
