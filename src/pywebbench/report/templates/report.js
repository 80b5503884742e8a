// Sortable result tables: click a header to sort by it, again to reverse. Each stack is a
// tbody (its measures, then its checks); cells carry their raw value in data-sort, and empty
// values stay at the bottom whichever way the sort goes.
(function () {
  "use strict";
  function isNumber(text) {
    return text !== "" && isFinite(Number(text));
  }
  function compare(a, b) {
    if (isNumber(a) && isNumber(b)) {
      return Number(a) - Number(b);
    }
    return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
  }
  function sortKey(group, index) {
    var cell = group.rows[0].cells[index];
    var raw = cell.getAttribute("data-sort");
    return raw === null ? cell.textContent.trim() : raw;
  }
  function sortTable(table, header) {
    var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var index = headers.indexOf(header);
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var groups = Array.prototype.slice.call(table.tBodies);
    groups.sort(function (x, y) {
      var a = sortKey(x, index), b = sortKey(y, index);
      if (a === "" || b === "") {
        return (a === "") - (b === "");
      }
      return ascending ? compare(a, b) : compare(b, a);
    });
    groups.forEach(function (group) { table.appendChild(group); });
    headers.forEach(function (th) { th.setAttribute("aria-sort", "none"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header) {
      header.addEventListener("click", function () { sortTable(table, header); });
    });
  });
})();
