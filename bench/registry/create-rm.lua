-- POST /registered_models, a unique name per request: <tag>-<thread>-<counter>.
-- Usage: wrk ... -s create-rm.lua URL -- TAG
local threads = {}
function setup(thread)
        thread:set("tid", #threads + 1)
        table.insert(threads, thread)
end
function init(args)
        tag = args[1] or "x"
        counter = 0
end
request = function()
        counter = counter + 1
        return wrk.format("POST", "/api/model_registry/v1alpha3/registered_models",
                { ["Content-Type"] = "application/json" },
                string.format('{"name":"%s-%d-%d","description":"bench"}', tag, tid, counter))
end
