// The diff page: two runs, contract by contract. Each platform's runs are in
// platforms/ID.runs.js (loaded as a script, which works from file:// too); the
// platform ids come from the page's own lists, never from the URL unchecked.
(function () {
  "use strict";
  var form = document.getElementById("diff-form");
  var table = document.getElementById("diff");
  var summary = document.getElementById("diff-summary");
  if (!form || !table) {
    return;
  }
  var params = new URLSearchParams(window.location.search);
  var sides = ["a", "b"];
  window.conformanceRuns = window.conformanceRuns || {};

  function known(select, value) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
  }

  function load(platform, done) {
    if (window.conformanceRuns[platform]) {
      done();
      return;
    }
    var script = document.createElement("script");
    script.src = "platforms/" + platform + ".runs.js";
    script.onload = done;
    script.onerror = function () { summary.textContent = "The runs of " + platform + " could not be loaded."; };
    document.head.appendChild(script);
  }

  function fillRuns(side, wanted) {
    var platform = form.elements[side + "_platform"].value;
    var select = form.elements[side + "_run"];
    load(platform, function () {
      var data = window.conformanceRuns[platform];
      select.textContent = "";
      data.runs.forEach(function (run, index) {
        var option = document.createElement("option");
        option.value = run.id;
        option.textContent = run.date + " (plugin " + run.plugin_version + ", kit " + run.kit_version + ", " + run.verdict + ")";
        option.selected = wanted ? run.id === wanted : index === (side === "a" && data.runs.length > 1 ? 1 : 0);
        select.appendChild(option);
      });
      compare();
    });
  }

  function outcomes(side) {
    var data = window.conformanceRuns[form.elements[side + "_platform"].value];
    var id = form.elements[side + "_run"].value;
    var run = data && data.runs.filter(function (r) { return r.id === id; })[0];
    if (!run) {
      return null;
    }
    var byContract = {};
    data.contracts.forEach(function (contract, i) { byContract[contract] = data.legend[run.outcomes[i]]; });
    return {run: run, data: data, byContract: byContract};
  }

  function status(entry) {
    var cell = document.createElement("td");
    var outcome = entry ? entry[0] : "absent";
    cell.className = "o-" + outcome;
    cell.textContent = entry ? entry[1] + " " + entry[2] : "· no test in this run";
    return cell;
  }

  function compare() {
    var from = outcomes("a"), to = outcomes("b");
    if (!from || !to) {
      return;
    }
    document.getElementById("diff-a").textContent = from.data.platform + ", " + from.run.date;
    document.getElementById("diff-b").textContent = to.data.platform + ", " + to.run.date;
    var body = table.tBodies[0];
    body.textContent = "";
    var contracts = Object.keys(from.byContract).concat(Object.keys(to.byContract).filter(function (c) {
      return !(c in from.byContract);
    })).sort();
    var differ = 0;
    contracts.forEach(function (contract) {
      var a = from.byContract[contract], b = to.byContract[contract];
      if (a && b && a[0] === b[0]) {
        return;
      }
      differ += 1;
      var row = body.insertRow();
      var name = document.createElement("th");
      name.scope = "row";
      name.textContent = contract;
      row.appendChild(name);
      row.appendChild(status(a));
      row.appendChild(status(b));
    });
    summary.textContent = differ + " of " + contracts.length + " contracts differ; the other " +
      (contracts.length - differ) + " ended the same in both runs.";
  }

  sides.forEach(function (side) {
    var platform = form.elements[side + "_platform"];
    var wanted = params.get(side + "_platform");
    if (wanted && known(platform, wanted)) {
      platform.value = wanted;
    } else if (side === "b" && params.get("a_platform") && known(platform, params.get("a_platform"))) {
      platform.value = params.get("a_platform");
    }
    platform.addEventListener("change", function () { fillRuns(side, null); });
    form.elements[side + "_run"].addEventListener("change", compare);
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); compare(); });
  if (form.elements.a_platform.options.length) {
    fillRuns("a", params.get("a_run"));
    fillRuns("b", params.get("b_run"));
  }
})();
