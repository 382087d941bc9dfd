"""The model backends: embedders and rerankers behind one interface each, their ONNX export, and the
start-up timing of each model (calibration)."""
