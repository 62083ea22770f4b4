mv helpers.py text_utils.py && sed -i 's/helpers/text_utils/g' app.py
