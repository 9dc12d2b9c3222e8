/* The decoder step-through (stepper.py): a token chip or the slider picks the step whose
 * top-k bars are shown.
 *
 * data: {T (steps), start (the step shown first)}
 */
/* global S2S */
"use strict";

S2S.views.stepper = function (root, data, kit) {
  var q = kit.q, qa = kit.qa;
  var sl = q("[data-slider=\"step\"]");
  function show(t) {
    qa(".s2s-step").forEach(function (s) { s.hidden = +s.getAttribute("data-step") !== t; });
    qa(".s2s-chip[data-step]").forEach(function (c) {
      c.setAttribute("aria-pressed", String(+c.getAttribute("data-step") === t));
    });
    sl.value = t;
    q(".s2s-stepval").textContent = t + " / " + data.T;
  }
  sl.addEventListener("input", function () { show(+sl.value); });
  qa(".s2s-chip[data-step]").forEach(function (c) {
    c.addEventListener("click", function () { show(+c.getAttribute("data-step")); });
  });
  show(data.start);
};
