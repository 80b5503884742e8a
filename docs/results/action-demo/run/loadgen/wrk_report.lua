-- Writes wrk's summary as JSON to the file named by PYWEBBENCH_WRK_REPORT, so the harness
-- never scrapes wrk's console text. Times are in microseconds, as wrk keeps them.
-- With PYWEBBENCH_WRK_HISTOGRAM set, it also writes wrk's raw latency record: every distinct
-- value (us) with its count (latency(i), i = 1..#latency), so the runs of several generator
-- hosts merge into exact percentiles instead of averaged ones.
local spectrum = {0, 1, 5, 10, 20, 25, 30, 40, 50, 60, 70, 75, 80, 85, 90, 95, 97.5,
                  99, 99.5, 99.9, 99.95, 99.99, 100}

done = function(summary, latency, requests)
  local path = os.getenv("PYWEBBENCH_WRK_REPORT")
  local out = assert(io.open(path, "w"))
  local parts = {}
  for _, p in ipairs(spectrum) do
    local value = latency:percentile(p)
    if p == 0 then value = latency.min end
    if p == 100 then value = latency.max end
    parts[#parts + 1] = string.format("[%s, %d]", tostring(p), value)
  end
  local e = summary.errors
  out:write(string.format(
    '{"duration_us": %d, "requests": %d, "bytes": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {"min": %d, "max": %d, "mean": %f, "stdev": %f, "percentiles": [%s]}}\n',
    summary.duration, summary.requests, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.max, latency.mean, latency.stdev, table.concat(parts, ", ")))
  if os.getenv("PYWEBBENCH_WRK_HISTOGRAM") then
    local pairs_ = {}
    for i = 1, #latency do
      local value, count = latency(i)
      pairs_[#pairs_ + 1] = string.format("[%d, %d]", value, count)
    end
    out:write(string.format('{"histogram_us": [%s]}\n', table.concat(pairs_, ", ")))
  end
  out:close()
end
