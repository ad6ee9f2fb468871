-- Put before the POST scripts (create-rm.lua, seed-mv.lua) by bench/registry/run: each wrk thread
-- gets its number in tid, a request counter starting at 0, and post(path, body), a JSON POST to
-- the registry's API path.
local threads = {}
function setup(thread)
        thread:set("tid", #threads + 1)
        table.insert(threads, thread)
end
counter = 0
function post(path, body)
        return wrk.format("POST", "/api/model_registry/v1alpha3/" .. path,
                { ["Content-Type"] = "application/json" }, body)
end
