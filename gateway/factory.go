package gateway

import "github.com/mqgate/mqgate/core/consumer"

// ConsumerFactory returns the NewClientFunc that builds real push-consumer
// clients over deps (cmd wires deps to the engine and the group registry).
// tune, if set, adjusts each client's options (e.g. PersistInterval).
func ConsumerFactory(deps consumer.Deps, tune func(*consumer.Options)) NewClientFunc {
	return func(o consumer.Options) (PushClient, error) {
		if tune != nil {
			tune(&o)
		}
		return consumer.New(o, deps)
	}
}
