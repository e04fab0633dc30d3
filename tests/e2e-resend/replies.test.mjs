// With Resend as the main provider: a guest email about a booking goes out with Resend's
// `reply_to` field (its reply address) and `Auto-Submitted: auto-generated`; the owner's alert has
// no reply address.
import { env } from "cloudflare:test";
import { describe, it, expect } from "vitest";
import { book, sendThrough, unique } from "../e2e/helpers.mjs";

describe("reply addresses through Resend", () => {
  it("a booking's confirmation carries reply_to and Auto-Submitted in Resend's request", async () => {
    const email = `${unique("resend-reply")}@example.com`;
    const b = await book({ email });
    await sendThrough(`booking_confirmation:${b.bookingId}`);
    const log = await (await fetch(`${env.RESEND_API}/_test/log`)).json();
    const sent = log.requests.filter((r) => r.to === email).at(-1);
    expect(sent.body.reply_to).toMatch(/^Example Trips <reply\+[a-z2-7]{44}@reply\.engine\.test>$/);
    expect(sent.body.headers).toMatchObject({ "Auto-Submitted": "auto-generated" });
    const owner = log.requests.filter((r) => r.to === "owner@example.com").at(-1);
    expect(owner.body.reply_to).toBeUndefined();
    expect(owner.body.headers).toMatchObject({ "Auto-Submitted": "auto-generated" });
  });
});
