// ESLint for the course's own JavaScript: the widgets' views (lib/widgets/static/), which run in
// notebooks, Colab and the website, and the website's scripts. `make lint` and
// tests/test_javascript.py run it (`npx eslint .`).
import js from "@eslint/js";

// The browser globals the views use, by name (a view that needs another one adds it here).
const browser = Object.fromEntries([
  "atob", "Blob", "btoa", "console", "document", "fetch", "getComputedStyle", "Image", "performance",
  "setTimeout", "URL", "window", "XMLSerializer",
].map((name) => [name, "readonly"]));

export default [
  {ignores: ["_build/**", "node_modules/**", ".venv/**"]},
  js.configs.recommended,
  {files: ["**/*.js"], languageOptions: {sourceType: "script", globals: browser}},
  {
    files: ["lib/widgets/static/**/*.js"],
    languageOptions: {
      // Plain scripts (no modules, no build step): common.js defines the global S2S, each
      // view file adds S2S.views.<name>; render.py inlines them into one function.
      ecmaVersion: 5,
      sourceType: "script",
      globals: browser,
    },
    rules: {
      "no-var": "off",
      eqeqeq: "error",
      "no-implicit-globals": ["error", {lexicalBindings: true}],
      "no-shadow": "error",
      "no-use-before-define": ["error", {functions: false}],
    },
  },
  {
    // activate.js is the body of an onload handler: `this` is the <style> element, and its
    // variables live in the handler's scope, not the page's.
    files: ["lib/widgets/static/activate.js"],
    rules: {"no-implicit-globals": "off"},
  },
];
