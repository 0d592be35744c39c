/** The types of eslint.config.js, for the tests that lint through ESLint's API with it. */
import type { Linter } from "eslint";

export declare const withoutTypeAwareRules: Linter.Config;
declare const config: Linter.Config[];
export default config;
