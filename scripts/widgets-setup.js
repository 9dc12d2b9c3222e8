// Prepares a page of the course website for @jupyter-widgets/html-manager (the widget manager
// that renders saved ipywidgets without a kernel). _config.yml loads this file just before
// RequireJS and the manager, on pages that contain widgets; scripts/vendor_assets.py copies it
// to _static/course/widgets-setup.js, beside _static/npm/ (a mirror of node_modules/).
(function () {
  "use strict";
  var npm = new URL("../npm/", document.currentScript.src).href;

  // 1. The manager's AMD modules locate their icon fonts from their RequireJS module URLs,
  //    which default to the page's folder. A `require` object defined before require.js loads
  //    is its configuration: resolve module names under _static/npm/, where
  //    @jupyter-widgets/html-manager/dist/ holds the fonts.
  if (typeof window.require === "undefined") {
    window.require = { baseUrl: npm };
  }
  window.__jupyter_widgets_assets_path__ = npm + "@jupyter-widgets/html-manager/dist/";

  // 2. html-manager 1.x typesets widget labels with MathJax 2's MathJax.Hub.Queue, but this
  //    site runs MathJax 3, which has no Hub. Translate the call, holding it until MathJax 3
  //    is ready (it loads deferred, after the widgets may already have rendered).
  var pending = [];
  function typeset(job) {
    var element = job && job[2];
    var mathjax = window.MathJax;
    if (mathjax && mathjax.typesetPromise) {
      mathjax.typesetPromise(element ? [element] : undefined).catch(function (error) {
        console.warn("MathJax could not typeset a widget label:", error);
      });
    } else {
      pending.push(job);
    }
  }
  var hub = { Queue: typeset };
  var config = (window.MathJax = window.MathJax || {});
  config.Hub = hub;
  var startup = (config.startup = config.startup || {});
  var ready = startup.ready;
  startup.ready = function () {
    if (ready) {
      ready();
    } else {
      window.MathJax.startup.defaultReady();
    }
    window.MathJax.Hub = hub;
    pending.splice(0).forEach(typeset);
  };
})();
