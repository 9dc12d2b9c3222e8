/* Accessibility fixes of the theme's markup (sphinx-book-theme, pydata-sphinx-theme,
 * sphinx-togglebutton, myst-nb, sphinxcontrib-bibtex) that the course cannot change at the
 * source. _config.yml adds this file to every page; tests/test_accessibility.py runs axe-core.
 *
 * - A control's accessible name contains its visible text (WCAG 2.5.3, "label in name"): the
 *   search buttons show "Search Ctrl+K" but are named "Search"; a code cell's "Show code cell
 *   source" toggle is named "Toggle hidden content"; the colour-mode button is named "Color
 *   mode" while its visible icon is named "Light", "Dark" or "System Settings".
 * - The references page's bibliography: a role="list" whose entries have the deprecated role
 *   doc-biblioentry, which is no list item.
 *
 * Font Awesome turns the theme's <i> icons into <svg>s after load, and sphinx-togglebutton adds
 * its toggles on DOMContentLoaded, so the fixes run again whenever the page's markup changes.
 */
/* global MutationObserver */
(function () {
  "use strict";

  function text(el) { return (el.textContent || "").replace(/\s+/g, " ").trim(); }

  /** Let the content name the control where it has visible text of its own. */
  function nameFromContent(el) {
    if (el.hasAttribute("aria-label") && text(el)) el.removeAttribute("aria-label");
  }

  function fix() {
    document.querySelectorAll("button.search-button__button").forEach(nameFromContent);
    document.querySelectorAll("details > summary[aria-label]").forEach(nameFromContent);
    document.querySelectorAll(".theme-switch-button").forEach(function (button) {
      // The icon shows the current mode; the button's name says which control it is and the
      // mode it is in, and the icons are decoration.
      var mode = document.documentElement.dataset.mode || "auto";
      var icon = button.querySelector(".theme-switch[data-mode=\"" + mode + "\"]");
      var title = icon && (icon.getAttribute("title") || text(icon));
      button.querySelectorAll(".theme-switch").forEach(function (i) {
        i.setAttribute("aria-hidden", "true");
      });
      var name = "Color mode" + (title ? ": " + title : "");
      if (button.getAttribute("aria-label") !== name) button.setAttribute("aria-label", name);
    });
    document.querySelectorAll("[role=list] > .citation[role=doc-biblioentry]").forEach(
      function (entry) { entry.setAttribute("role", "listitem"); });
  }

  var pending = false;
  function soon() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; fix(); });
  }

  function start() {
    fix();
    new MutationObserver(soon).observe(document.body, {childList: true, subtree: true});
    new MutationObserver(soon).observe(document.documentElement,
      {attributes: true, attributeFilter: ["data-mode"]});
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
