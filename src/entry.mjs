// The Worker's entry module: the Rust build plus the one thing workers-rs cannot define yet, a
// Workflow class (workers-rs#663). A Workflow class must extend WorkflowEntrypoint, so this glue
// does exactly that and hands every run to the Rust `run_journey` export — all steps are Rust.
import { WorkflowEntrypoint } from "cloudflare:workers";
import Engine from "../build/index.js";

export { Outbox } from "../build/index.js";
export default Engine;

export class JourneyWorkflow extends WorkflowEntrypoint {
  async run(event, step) {
    return Engine.prototype.run_journey(event, step, this.env);
  }
}
