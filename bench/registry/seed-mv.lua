-- Seeds model versions under one registered model (names unique per run tag).
-- Usage: wrk ... -s seed-mv.lua URL -- RM_ID TAG (after post.lua, as bench/registry/run does)
function init(args)
        rm = args[1]
        tag = args[2] or "x"
end
request = function()
        counter = counter + 1
        return post("model_versions",
                string.format('{"name":"v%s-%d-%d","registeredModelId":"%s","author":"bench",' ..
                        '"customProperties":{"n":{"metadataType":"MetadataIntValue","int_value":"%d"}}}',
                        tag, tid, counter, rm, counter % 100))
end
