-- The traffic mix of the `app` command (generated).
local mix = {
  {"GET", "/notes?limit=20", {}, nil, 1},
}
local pool, next_index = {}, 0
init = function(args)
  for _, r in ipairs(mix) do
    local text = wrk.format(r[1], r[2], r[3], r[4])
    for _ = 1, r[5] do pool[#pool + 1] = text end
  end
end
request = function()
  next_index = next_index % #pool + 1
  return pool[next_index]
end
