-- Seeds model versions under one registered model (names unique per run tag).
-- Usage: wrk ... -s seed-mv.lua URL -- RM_ID TAG
local threads = {}
function setup(thread)
        thread:set("tid", #threads + 1)
        table.insert(threads, thread)
end
function init(args)
        rm = args[1]
        tag = args[2] or "x"
        counter = 0
end
request = function()
        counter = counter + 1
        return wrk.format("POST", "/api/model_registry/v1alpha3/model_versions",
                { ["Content-Type"] = "application/json" },
                string.format('{"name":"v%s-%d-%d","registeredModelId":"%s","author":"bench",' ..
                        '"customProperties":{"n":{"metadataType":"MetadataIntValue","int_value":"%d"}}}',
                        tag, tid, counter, rm, counter % 100))
end
