/* The decoder step-through: S2S.draw.stepper draws the written tokens as chips and, for every
 * step, the prediction head's top-k next tokens as bars; S2S.views.stepper shows the step that
 * a chip or the slider picks (on a chip, the arrow keys, Home and End step too).
 *
 * data (stepper.py's stepper_data):
 *   {sentence, T (steps), start (the step shown first),
 *    steps: [{input (the token read), token (written), forced, prev_forced, logp (of the token
 *             written), rank (of it, 1 = the best), top: [[token, log P], ...] best first}],
 *    translation, prefix (the forced prefix), greedy (what greedy writes without forcing),
 *    log_prob (of the output), prefix_unknown (prefix words not in the vocabulary),
 *    capped (no <eos>: the length cap stopped it)}
 */
/* global S2S */
(function () {
  "use strict";

  var BAR_SPAN = 80;  // percent of its column that a probability of 1 fills (room for the number)
  var esc = S2S.esc, short = S2S.short, fmt = S2S.fmt;

  function tag(forced) {
    return "<span class=\"s2s-tag " + (forced ? "forced" : "greedy") + "\">" +
      (forced ? "forced" : "greedy") + "</span>";
  }

  /** The top-k bars of step t, the written token highlighted. */
  function bars(step, t) {
    var written = step.token, cls = step.forced ? "force" : "pick", listed = false;
    var rows = step.top.map(function (top) {
      var p = Math.exp(top[1]), mine = top[0] === written;
      listed = listed || mine;
      return "<span class=\"w" + (mine ? " pick" : "") + "\" title=\"" + esc(top[0]) + "\">" +
        esc(short(top[0])) + "</span><span class=\"bw\"><span class=\"b" + (mine ? " " + cls : "") +
        "\" style=\"width:" + (BAR_SPAN * p).toFixed(1) + "%\"></span><span class=\"p\">" +
        (100 * p).toFixed(1) + "%" + (mine ? tag(step.forced) : "") + "</span></span>";
    });
    if (!listed) {  // a forced token outside the top k
      var p = Math.exp(step.logp);
      rows.push("<span class=\"gap\">… " + (step.rank - step.top.length - 1) + " more …</span>" +
        "<span class=\"w pick\">" + esc(short(written)) + "</span><span class=\"bw\">" +
        "<span class=\"b force\" style=\"width:" + (BAR_SPAN * p).toFixed(1) + "%\"></span>" +
        "<span class=\"p\">" + Number((100 * p).toPrecision(2)) + "%" + tag(true) +
        "</span></span>");
    }
    var how = t > 1 && step.prev_forced ? "your forced token" :
      t === 1 ? "the start token" : "its own previous prediction";
    var loss = step.forced ? " · −log P(«" + esc(written) + "») = " + fmt(-step.logp) +
      ", this step's term of the training loss (eq. 7)" : "";
    return "<div class=\"s2s-step\" data-step=\"" + t + "\"><h5>Step " + t + ": the decoder " +
      "reads «" + esc(step.input) + "» (" + how + "); P(next token) from the prediction head, " +
      "top " + step.top.length + loss + "</h5><div class=\"s2s-bars\">" + rows.join("") +
      "</div></div>";
  }

  /** The tokens written, one chip each after <sos>: a click shows that step. */
  function chips(data) {
    return "<span class=\"s2s-chip sos\">&lt;sos&gt;<small>start</small></span>" +
      data.steps.map(function (s, i) {
        var t = i + 1, p = Math.exp(s.logp);
        var tip = "step " + t + ": P = " + p.toFixed(3) + ", rank " + s.rank +
          (s.forced ? " (forced)" : "");
        return "<button type=\"button\" class=\"s2s-chip" + (s.forced ? " forced" : "") +
          "\" data-step=\"" + t + "\" title=\"" + esc(tip) + "\">" + esc(short(s.token)) +
          "<small>" + (100 * p).toFixed(0) + "%</small></button>";
      }).join("");
  }

  function summary(data) {
    var output = esc(data.translation) || "(nothing)", lines = [];
    if (data.prefix) {
      lines.push("Forced prefix «" + esc(data.prefix) + "» (dashed, blue), then greedy: «" +
        output + "»", "Without forcing, greedy writes: «" + esc(data.greedy) + "»");
    } else {
      lines.push("Greedy decoding writes: «" + output + "»");
    }
    lines.push("log P(output | source) = Σ log P of the written tokens = " +
      fmt(data.log_prob, 3));
    if (data.prefix_unknown.length) {
      lines.push("<span class=\"s2s-err\">Not in the French vocabulary (read as &lt;unk&gt;): " +
        esc(data.prefix_unknown.join(", ")) + "</span>");
    }
    if (data.capped) lines.push("It stopped at the length cap before writing &lt;eos&gt;.");
    return "<p class=\"s2s-summary\">" + lines.join("<br>") + "</p>";
  }

  S2S.draw.stepper = function (data) {
    return S2S.header("Decoding «" + esc(data.sentence) + "» step by step", false) +
      "<p class=\"s2s-sub\">At each step the decoder reads the previous token and the " +
      "prediction head turns its state into probabilities for the next token (eq. 8). Greedy " +
      "writes the most probable one; a forced prefix writes yours instead (teacher forcing). " +
      "Click a token or move the slider.</p><div class=\"s2s-chips\">" + chips(data) +
      "</div><div class=\"s2s-bar\">" + S2S.slider("step", 1, data.T, data.start, "step") +
      "<span class=\"s2s-js s2s-stepval\"></span></div>" +
      data.steps.map(function (s, i) { return bars(s, i + 1); }).join("") + summary(data);
  };

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
    // On a chip, the arrow keys step as the slider's do (left/up back, right/down on, Home and
    // End the ends), and the focus follows to the chip of the step shown.
    var KEYS = {ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1};
    q(".s2s-chips").addEventListener("keydown", function (e) {
      var chip = e.target.closest(".s2s-chip[data-step]");
      if (!chip || e.altKey || e.ctrlKey || e.metaKey) return;
      var t = +chip.getAttribute("data-step");
      if (e.key in KEYS) t += KEYS[e.key];
      else if (e.key === "Home") t = 1;
      else if (e.key === "End") t = data.T;
      else return;
      e.preventDefault();
      t = Math.max(1, Math.min(data.T, t));
      show(t);
      q(".s2s-chip[data-step=\"" + t + "\"]").focus();
    });
    show(data.start);
  };
}());
