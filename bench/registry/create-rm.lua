-- POST /registered_models, a unique name per request: <tag>-<thread>-<counter>.
-- Usage: wrk ... -s create-rm.lua URL -- TAG (after post.lua, as bench/registry/run does)
function init(args)
        tag = args[1] or "x"
end
request = function()
        counter = counter + 1
        return post("registered_models",
                string.format('{"name":"%s-%d-%d","description":"bench"}', tag, tid, counter))
end
