/* The BLEU explorer (bleu_view.py): the order buttons set data-order, and bleu.css highlights
 * the tokens and rows of that order.
 *
 * data: {} (everything is in the markup)
 */
/* global S2S */
"use strict";

S2S.views.bleu = function (root, data, kit) {
  var q = kit.q, qa = kit.qa, press = kit.press;
  var box = q(".s2s-bleu");
  qa("[data-group=\"order\"] button").forEach(function (b) {
    b.addEventListener("click", function () {
      box.setAttribute("data-order", b.getAttribute("data-value"));
      press(q("[data-group=\"order\"]"), b.getAttribute("data-value"));
    });
  });
};
