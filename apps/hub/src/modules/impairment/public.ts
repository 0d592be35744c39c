/** What other modules may use of impairment: applying the health checker's verdicts (the health reflection does). */
export { applyImpairment } from "./service.ts";
