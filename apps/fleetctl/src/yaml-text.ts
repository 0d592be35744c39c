/**
 * -o yaml's text. Imported only when YAML is asked for (so other commands load no YAML code), and
 * through a static named import, which the built CLI's bundler maps onto the package's CommonJS
 * build as Node does (a dynamic `import("yaml")` there would only see its default export).
 */
import { stringify } from "yaml";

export const yamlText = (value: unknown): string => stringify(value);
